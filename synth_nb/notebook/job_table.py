"""``%synth_train --jobs``: the jobs submitted from the notebook's folder, as an HTML table with a text copy."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import overload

from synth_nb.job import JobRecord, JobRegistry
from synth_nb.markup import NO_MATH, html_text

__all__ = ["NO_END_SEEN", "JobList", "jobs_bundle", "list_jobs"]

#: the status of a job whose end no kernel or command has seen yet (it is recorded when a watcher sees it)
NO_END_SEEN = "not ended when last seen (attach to follow it)"


class JobList(Sequence[JobRecord]):
    """The job records, newest first; a notebook shows them as the jobs table, once, not as a raw repr."""

    def __init__(self, records: Iterable[JobRecord]) -> None:
        self._records = list(records)

    @overload
    def __getitem__(self, index: int) -> JobRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[JobRecord]: ...
    def __getitem__(self, index: int | slice) -> JobRecord | list[JobRecord]:
        return self._records[index]

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        return f"<{len(self)} jobs submitted from this folder>"

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        return jobs_bundle(self)


def list_jobs(folder: Path) -> JobList:
    """The jobs recorded in ``folder/.synth_nb/jobs.json``, newest first (shown as a table when returned)."""
    return JobList(reversed(JobRegistry(folder).list()))


def jobs_bundle(records: Sequence[JobRecord]) -> dict[str, str]:
    """``text/html`` table (with a caption and header scopes) plus the same rows as ``text/plain``."""
    if not records:
        text = "No jobs submitted from this folder yet."
        return {"text/plain": text, "text/html": f"<p>{text}</p>"}
    head = ("job id", "flow", "status", "submitted", "config")
    rows = [(r.job_id, r.flow + (f"/{r.algorithm}" if r.algorithm else ""), r.status or NO_END_SEEN, r.submitted_at,
             Path(r.config_path).name if r.config_path else "") for r in records]
    text = "\n".join("  ".join(str(c) for c in row) for row in [head, *rows])
    text += "\nRe-attach with: %synth_train --attach JOB_ID"
    cells = "".join("<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in row) + "</tr>" for row in rows)
    header = "".join(f"<th scope='col'>{h}</th>" for h in head)
    markup = (f"<table class='synth-jobs'><caption>Jobs submitted from this folder</caption><thead><tr>{header}"
              f"</tr></thead><tbody class='{NO_MATH}'>{cells}</tbody></table><p>Re-attach with <code>%synth_train --attach "
              f"JOB_ID</code>.</p>")
    return {"text/plain": text, "text/html": markup}
