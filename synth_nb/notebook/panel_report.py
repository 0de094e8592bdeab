"""What a finished panel keeps of the job's report: the report's own fragment (``synth_nb.job.report_html``),
folded under the status line, so the saved notebook, nbconvert's export, GitHub and VS Code show the same
figures, final block, explorer and masked config and plan as ``report.html``, with no kernel and no script.

The chart and the summary are left out: the panel's own chart and summary outputs show them just below. So is
the explorer, which ``job.explorer()`` shows in the notebook and ``report.html`` holds: kept in every panel, it
would double a saved notebook's size.
"""

from __future__ import annotations

from typing import Any

from synth_nb.job.report_html import job_fragment
from synth_nb.markup import html_text

__all__ = ["SHOWN_BESIDE", "folded_report"]

#: the report's sections the panel's other outputs already show, and the explorer (shown on demand)
SHOWN_BESIDE = ("chart", "summary", "explorer")


def folded_report(job: Any) -> str:
    """The job's report fragment in a closed ``<details>``; a report that cannot be made says why instead (the
    panel has ended either way)."""
    try:
        body = job_fragment(job, leave_out=SHOWN_BESIDE)
    except Exception as exc:  # the panel's status and results stay whatever a section trips on
        return f"<p class='synth-report-problem'>The job's report could not be made: {html_text(type(exc).__name__)}: " \
               f"{html_text(exc)}</p>"
    return (f"<details class='synth-report-folded'><summary>The job's report: figures, estimate, final block, "
            f"config and plan (as report.html holds them, with the explorer)</summary>{body}</details>")
