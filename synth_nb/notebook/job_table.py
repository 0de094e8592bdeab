"""``%synth_train --jobs``: the jobs submitted from the notebook's folder, as an HTML table with a text copy.

What is listed is ``synth_nb.pipeline.actions.jobs``'s answer, the one ``synth-nb jobs`` prints too (statuses
asked of each job's backend first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

from synth_nb.job import JobRecord
from synth_nb.markup import NO_MATH, html_text
from synth_nb.pipeline.jobs import JobList

__all__ = ["NO_END_SEEN", "JobTable", "jobs_bundle"]

#: the status of a job whose end no kernel or command has seen yet (it is recorded when a watcher sees it)
NO_END_SEEN = "not ended when last seen (attach to follow it)"


class JobTable(Sequence[JobRecord]):
    """The job records, newest first; a notebook shows them as the jobs table, once, not as a raw repr."""

    def __init__(self, listed: JobList) -> None:
        self.listed = listed
        self._records = listed.records

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
        return jobs_bundle(self._records, self.listed)


def jobs_bundle(records: Sequence[JobRecord], listed: JobList | None = None) -> dict[str, str]:
    """``text/html`` table (with a caption and header scopes) plus the same rows as ``text/plain``; ``listed``
    says which statuses are only the recorded ones (and why)."""
    if not records:
        text = "No jobs submitted from this folder yet."
        return {"text/plain": text, "text/html": f"<p>{text}</p>"}
    listed = listed or JobList(list(records))
    head = ("job id", "flow", "status", "stopped", "submitted", "config")
    rows = [tuple(row[name.replace(" ", "_")] for name in head) for row in listed.rows(NO_END_SEEN)]
    text = "\n".join("  ".join(str(c) for c in row) for row in [head, *rows])
    notes = [f"Status marked (recorded) is the last one seen: {note}" for note in listed.notes]
    text += "".join(f"\n{note}" for note in notes) + "\nRe-attach with: %synth_train --attach JOB_ID"
    cells = "".join("<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in row) + "</tr>" for row in rows)
    header = "".join(f"<th scope='col'>{h}</th>" for h in head)
    said = "".join(f"<p class='{NO_MATH}'>{html_text(note)}</p>" for note in notes)
    markup = (f"<table class='synth-jobs'><caption>Jobs submitted from this folder</caption><thead><tr>{header}"
              f"</tr></thead><tbody class='{NO_MATH}'>{cells}</tbody></table>{said}"
              f"<p>Re-attach with <code>%synth_train --attach JOB_ID</code>.</p>")
    return {"text/plain": text, "text/html": markup}
