"""``%synth_train --jobs``: the jobs submitted from the notebook's folder, as an HTML table with a text copy."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from synth_nb.job import JobRecord, JobRegistry

__all__ = ["jobs_bundle", "list_jobs"]


def list_jobs(folder: Path) -> list[JobRecord]:
    """Display the jobs recorded in ``folder/.synth_nb/jobs.json``, newest first, and return them."""
    from IPython.display import display

    records = list(reversed(JobRegistry(folder).list()))
    display(jobs_bundle(records), raw=True)
    return records


def jobs_bundle(records: Sequence[JobRecord]) -> dict[str, str]:
    """``text/html`` table (with a caption and header scopes) plus the same rows as ``text/plain``."""
    if not records:
        text = "No jobs submitted from this folder yet."
        return {"text/plain": text, "text/html": f"<p>{text}</p>"}
    head = ("job id", "flow", "status", "submitted", "config")
    rows = [(r.job_id, r.flow + (f"/{r.algorithm}" if r.algorithm else ""), r.status or "?", r.submitted_at,
             Path(r.config_path).name if r.config_path else "") for r in records]
    text = "\n".join("  ".join(str(c) for c in row) for row in [head, *rows])
    text += "\nRe-attach with: %synth_train --attach JOB_ID"
    cells = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    header = "".join(f"<th scope='col'>{h}</th>" for h in head)
    markup = (f"<table class='synth-jobs'><caption>Jobs submitted from this folder</caption><thead><tr>{header}"
              f"</tr></thead><tbody>{cells}</tbody></table><p>Re-attach with <code>%synth_train --attach "
              f"JOB_ID</code>.</p>")
    return {"text/plain": text, "text/html": markup}
