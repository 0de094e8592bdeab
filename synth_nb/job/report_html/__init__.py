"""One self-contained HTML report per job: ``job.to_html(path)``, ``synth-nb report JOB --html``, the bundle's
``report.html`` and what a finished notebook panel leaves in the saved notebook.

The report says, for any flow: the status and its one stop reason, the headline figures each beside what it
was measured on, the estimate the job was sent with beside what it used, the flow's chart, the final block,
the summary, the explorer (prompt learning), any added section (``add_section``: the inspector's tables) and
the masked config and plan. A page (``job_page``) is a whole document, a fragment (``job_fragment``) one
element for a notebook output; ``comparison_page`` wraps ``synth_nb.compare``'s HTML the same way.
One module per section over ``_base``.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from synth_nb.flows.artifacts import job_results_dir
from synth_nb.job.ending import ending_of
from synth_nb.job.report_html._base import (
    REPORT_FILE,
    ReportSource,
    Section,
    SectionMaker,
    add_section,
    added_sections,
    fragment,
    page,
)
from synth_nb.job.report_html.charts import chart_alt, chart_section
from synth_nb.job.report_html.config import config_section
from synth_nb.job.report_html.final_block import final_section
from synth_nb.job.report_html.status import ended_section, estimate_section, figures_section
from synth_nb.job.report_html.summary import artifact_html, explorer_section, summary_section
from synth_nb.untrusted import contained

__all__ = ["REPORT_FILE", "ReportSource", "Section", "SectionMaker", "add_section", "artifact_html", "chart_alt",
           "comparison_page", "job_folder", "job_fragment", "job_page", "report_sections", "write_job_report"]


def job_folder(job: Any) -> Path | None:
    """The job's own folder (``<results_folder>/<job id>/``: result files, bundle) when it exists here."""
    folder = job_results_dir(str(job.id), getattr(job, "results_folder", None))
    return folder if folder.is_dir() else None


def report_sections(source: ReportSource) -> list[Section]:
    """Every section of the job's report, in reading order (a section with nothing to say is left out)."""
    ending = ending_of(source.job)
    made = [ended_section(source, ending), figures_section(ending), estimate_section(ending),
            chart_section(source), final_section(source), summary_section(source), explorer_section(source),
            *added_sections(source), config_section(source)]
    return [section for section in made if section is not None]


def _title(job: Any) -> str:
    return f"Report of job {job.id}"


def job_fragment(job: Any, folder: Path | None = None, *, leave_out: Collection[str] = ()) -> str:
    """The report as one HTML element (a notebook output): ``folder`` is where its bundle is (default: its own);
    ``leave_out``: sections (by key: "chart", "summary" …) shown beside it already."""
    source = ReportSource(job, folder if folder is not None else job_folder(job))
    sections = [s for s in report_sections(source) if s.key not in leave_out]
    return fragment(_title(job), sections, source.secrets, job_id=str(job.id))


def job_page(job: Any, folder: Path | None = None) -> str:
    """The report as a whole HTML document, readable with no network, no script and no style."""
    source = ReportSource(job, folder if folder is not None else job_folder(job))
    return page(_title(job), fragment(_title(job), report_sections(source), source.secrets, job_id=str(job.id)),
                source.secrets)


def write_job_report(job: Any, path: str | Path | None = None, folder: Path | None = None) -> Path:
    """Write ``job_page(job)`` to ``path`` (default: ``report.html`` in the job's folder) and return where."""
    if path is None:
        base = folder if folder is not None else job_results_dir(str(job.id), getattr(job, "results_folder", None))
        target = contained(base, REPORT_FILE)
    else:
        target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(job_page(job, folder), encoding="utf-8")
    return target


def comparison_page(title: str, body: str, secrets: tuple[str, ...] = ()) -> str:
    """A comparison's HTML (``Comparison.to_html()``) as a whole, self-contained document."""
    return page(title, f"<main>{body}</main>", secrets)
