"""The report's opening sections: how the job ended (status and its one stop reason), its headline figures
each beside what it was measured on, and the estimate it was sent with beside what it used.

Everything here is ``synth_nb.job.ending``'s (the one place every door reads how a job ended) and the
flow's gains; this module only lays it out.
"""

from __future__ import annotations

from synth_nb.flows import get_flow
from synth_nb.job.ending import Ending
from synth_nb.job.progress import format_duration
from synth_nb.job.quiet import elapsed_of
from synth_nb.job.report_html._base import ReportSource, Section, e, grid_table, rows_table

__all__ = ["ended_section", "estimate_section", "figures_section"]


def ended_section(source: ReportSource, ending: Ending) -> Section:
    job = source.job
    flow = get_flow(job.flow)
    algorithm = f" ({job.algorithm})" if job.algorithm else ""
    doc = job.status_doc or {}
    rows = [("Job", str(job.id)), ("Flow", f"{flow.label}{algorithm}"), ("Status", str(job.status)),
            ("Why it stopped", ending.stop.text), ("Backend", str(getattr(job, "backend_url", "") or "not known"))]
    rows += [(label, str(doc[key])) for key, label in (("created_at", "Created"), ("started_at", "Started"),
                                                      ("finished_at", "Finished")) if doc.get(key)]
    elapsed = elapsed_of(job)
    if elapsed is not None:
        rows.append(("Elapsed", format_duration(elapsed)))
    status = e(job.status)
    head = (f"<p class='headline status-{status}' data-status='{status}'><strong>"
            f"{e(ending.headline(str(job.id)))}</strong></p>")
    return Section("ended", "How it ended", head + rows_table(rows))


def figures_section(ending: Ending) -> Section | None:
    """The headline measure at the start and the end, each with the data it was measured on (held-out or
    the run's own)."""
    parts = []
    if ending.gains:
        rows = [(g.measure, f"{g.baseline:.4f}", f"{g.result:.4f}", f"{g.result - g.baseline:+.4f}",
                 g.measured_on or "not said",
                 "held out (data the run did not learn from)" if g.held_out else "the run's own data")
                for g in ending.gains]
        parts.append(grid_table(["Measure", "At the start", "At the end", "Change", "Measured on", "Which data"],
                                rows, "Each figure beside the data it was measured on"))
    if not parts:
        return None
    return Section("figures", "Headline figures", "".join(parts))


def estimate_section(ending: Ending) -> Section | None:
    """Each figure the job used beside the pre-flight estimate it was sent with, and their ratio."""
    figures = [f for f in ending.figures if f.actual is not None or f.estimate is not None]
    if not figures:
        return None
    rows = [(f.name, f.actual_text, f.estimate_text or "none kept",
             "" if f.ratio is None else f"×{f.ratio:.2f}") for f in figures]
    basis = f"<p class='note'>Estimate: {e(ending.basis())}.</p>"
    return Section("estimate", "Estimate beside the actual",
                   basis + grid_table(["Figure", "Used", "Estimate", "Used / estimate"], rows))
