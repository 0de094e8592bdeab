"""What happens to jobs once they are sent (or attached to): the follow stage, the same from every door.

``follow(jobs, request)`` does what the request's following flags ask (``Request.following``): a budget
watchdog per job (``--max-minutes`` & co.), the job's results written when it ends (``Job.write_results``:
its result files and, for a job submitted from this folder, its bundle), the ``--report-to`` writers and the
``--record`` recordings; with ``--no-poll`` nothing. The doors then only draw (line printer, chart board,
panels) and decide how Ctrl-C ends; ``Following.close()`` ends what this stage started.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from synth_nb import report
from synth_nb.job import Job, Recorder
from synth_nb.job.results import write_at_end
from synth_nb.job.watchdog import watch
from synth_nb.pipeline.request import Request
from synth_nb.report import Reporter
from synth_nb.untrusted import contained

__all__ = ["Following", "follow", "record_path", "start_recording"]


@dataclass
class Following:
    """The jobs one command or cell follows, and the writers this stage started for them."""

    jobs: list[Job]
    reporters: list[Reporter] = field(default_factory=list)
    recorders: list[Recorder] = field(default_factory=list)

    def close(self) -> None:
        """Close the recordings (each also closes itself when its job ends)."""
        for recorder in self.recorders:
            recorder.close()


def follow(jobs: Sequence[Job], request: Request, *, secrets: Sequence[str] = ()) -> Following:
    """Start following ``jobs`` as ``request`` says; ``secrets`` are masked in the recordings."""
    following = request.following
    jobs = list(jobs)
    if not following.poll:
        return Following(jobs)
    for job in jobs:
        if following.limits is not None:
            watch(job, following.limits)
        write_at_end(job)  # Job.write_results: its result files and, sent from here, its bundle
    reporters = report.start(jobs, following.report)  # after the results: a reporter's end reads them
    return Following(jobs, reporters, start_recording(jobs, following.record, secrets))


def record_path(base: Path, job_id: str, several: bool) -> Path:
    """``--record PATH``: ``PATH`` for one job, ``<stem>-<job id><suffix>`` for each of several."""
    return contained(base.parent, f"{base.stem}-{job_id}{base.suffix or '.jsonl'}") if several else base


def start_recording(jobs: Sequence[Job], base: Path | None, secrets: Sequence[str]) -> list[Recorder]:
    """One JSONL recording per job from now on (what each job already holds is written first)."""
    if base is None:
        return []
    recorders = []
    for job in jobs:
        recorder = Recorder(record_path(base, job.id, len(jobs) > 1), secrets=secrets)
        recorder.follow(job)
        recorders.append(recorder)
    return recorders
