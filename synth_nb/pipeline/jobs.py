"""``--jobs`` / ``synth-nb jobs``: the jobs sent from a folder, each as its backend says it is now.

The registry (``.synth_nb/jobs.json``) holds what a command that followed a job last saw; a job sent with
``--no-poll`` and never followed holds no status and no last event. So every job not recorded as ended, or
ended with no event recorded, is asked of its backend first, all at once and within ``REFRESH_SECONDS``: its
status and last event seq are recorded for the next listing, and for an ended job why it stopped (its one stop
reason, ``synth_nb.job.ending``, read from its status and events when no command that followed it recorded it). A job the embedded backend ran is asked of the
embedded backend running now, wherever it listens after a restart. When a backend cannot answer, the recorded
status is kept and marked, with one note per backend. The terminal and the notebook show the same ``JobList``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from synth_nb.errors import SynthNbError
from synth_nb.job.registry import JobRecord, JobRegistry, short_reason
from synth_nb.statuses import TERMINAL_STATUSES

if TYPE_CHECKING:
    from synth_nb.pipeline.target import Target

__all__ = ["REFRESH_SECONDS", "JobList", "list_jobs"]

#: the whole refresh, however many backends: a listing must not hang on an unreachable one
REFRESH_SECONDS = 10.0
#: events read per page when a finished job's last event is not recorded
EVENTS_PAGE = 1000


@dataclass(frozen=True)
class JobList:
    """The folder's jobs, newest first, as their backends said they are (``stale``: recorded, not asked)."""

    records: list[JobRecord]
    #: the jobs whose backend did not answer: their status is the one last seen
    stale: frozenset[str] = frozenset()
    #: one sentence per backend that did not answer
    notes: list[str] = field(default_factory=list)
    #: where they are recorded (None: records given as they are)
    registry: JobRegistry | None = None

    def status(self, record: JobRecord, unknown: str = "-") -> str:
        """The status shown for ``record``: ``running (recorded)`` when its backend did not answer."""
        return (record.status or unknown) + (" (recorded)" if record.job_id in self.stale else "")

    def rows(self, unknown: str = "-") -> list[dict[str, str]]:
        """One row of cells per job, by column name; each door shows the columns it has room for."""
        return [{"job_id": r.job_id, "flow": r.flow + (f"/{r.algorithm}" if r.algorithm else ""),
                 "status": self.status(r, unknown), "submitted": r.submitted_at, "last_seq": str(r.last_seq),
                 "stopped": short_reason(r.stop_reason) if r.stop_reason and r.status in TERMINAL_STATUSES else "-",
                 "backend": r.backend_url, "config": Path(r.config_path).name if r.config_path else ""}
                for r in self.records]


def _asked(record: JobRecord) -> bool:
    """Whether the backend must be asked: the job is not recorded as ended, or ended with no event seen or no
    stop reason recorded."""
    return (record.status or "") not in TERMINAL_STATUSES or not record.last_seq or not record.stop_reason


def _target(record: JobRecord) -> Target:
    """Where the job lives: its URL, or the embedded backend running now when the embedded one ran it (a
    restarted backend listens on another port and keeps the job)."""
    from synth_nb.pipeline.target import resolve_target, running_local_target  # see _ask

    target = resolve_target(record.backend_url, start_local=False)
    if record.embedded and not target.is_embedded:
        return running_local_target() or target
    return target


@dataclass(frozen=True)
class _Answer:
    status: str
    last_seq: int
    stop_reason: str | None = None


async def _ask(record: JobRecord) -> _Answer:
    """The job as its backend says it is now: status, last event seq and, once it ended, why it stopped (read
    from its status and every event after the last one recorded; raises when the backend cannot say)."""
    # imported here, not at the top: a listing with no job to ask (every one ended and recorded) imports no
    # client, flow or secret resolution (0.3 s of CPU of `synth-nb jobs`, benchmarks/cli_start.py)
    from synth_nb.client import AsyncSynthClient
    from synth_nb.flows import get_flow
    from synth_nb.job import Job
    from synth_nb.pipeline.prepare import SecretSources

    target = _target(record)
    endpoints = get_flow(record.flow).endpoints
    async with AsyncSynthClient(target.url, SecretSources().api_key(target), timeout=REFRESH_SECONDS,
                                max_attempts=1) as client:
        job = Job(record.job_id, record.flow, client, endpoints=endpoints)  # masks what it takes in
        job.ingest_status(await client.get_status(endpoints, record.job_id))
        status = job.status
        last = job.status_doc.get("last_seq")
        known = last if isinstance(last, int) and not isinstance(last, bool) else None
        seen = max(known or 0, record.last_seq)
        if status not in TERMINAL_STATUSES or (known is not None and record.stop_reason):
            return _Answer(status, seen)
        try:  # every event: the stop reason is read from them (and the count, where the status has none)
            while True:
                page = await client.get_event_records(endpoints, record.job_id, job.last_seq, EVENTS_PAGE)
                if not job.ingest_events(page) or len(page) < EVENTS_PAGE:
                    break
        except SynthNbError:  # the status is known; the count stays what was seen
            return _Answer(status, seen)
        return _Answer(status, max(seen, job.last_seq), job.ending().stop.text)


async def list_jobs(registry: JobRegistry, *, refresh: bool = True) -> JobList:
    """The registry's jobs, those worth asking refreshed from their backends (and recorded) first, all at once
    and within ``REFRESH_SECONDS``."""
    asked = [r for r in registry.list() if _asked(r)] if refresh else []
    tasks = [asyncio.ensure_future(_ask(r)) for r in asked]
    if tasks:
        await asyncio.wait(tasks, timeout=REFRESH_SECONDS)
    stale: set[str] = set()
    notes: dict[str, str] = {}
    for record, task in zip(asked, tasks, strict=True):
        if not task.done():
            task.cancel()
        answer = task.exception() if task.done() else TimeoutError(f"no answer within {REFRESH_SECONDS:.0f} s")
        if answer is None:
            found = task.result()
            status, stopped = found.status or record.status, found.stop_reason or record.stop_reason
            if (status, found.last_seq, stopped) != (record.status, record.last_seq, record.stop_reason):
                registry.update(record.job_id, status=status, last_seq=found.last_seq, stop_reason=stopped)
            continue
        reason = str(answer).splitlines()[0][:160] if isinstance(answer, SynthNbError | TimeoutError) \
            else type(answer).__name__
        stale.add(record.job_id)
        from synth_nb.backend import display_url  # see _ask

        notes.setdefault(record.backend_url, f"{display_url(record.backend_url)} did not answer ({reason})")
    return JobList(registry.list(), frozenset(stale), list(notes.values()), registry)
