"""Say when the backend stops answering while jobs are followed, keep saying it, and say when it is back;
give up at once when the embedded backend's process is gone.

Without this a backend outage is silence for as long as ``--poll-timeout`` (an hour by default): the
client keeps retrying, which is right for a remote backend, but the user cannot tell a quiet job from a
dead connection. The notice reads ``Job.unreachable_since``, the same signal a notebook panel can show,
and says how to come back to the job later or cancel it.

The embedded backend is different: its data folder's info file (``synth_nb.local.backend_info``) names the
process serving it, so a ``kill -9`` is seen within ``OUTAGE_CHECK`` seconds, and retrying would only wait
for nobody. ``report_outages`` then says so and what to run, and returns: following ends there.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import datetime

from synth_nb.backend import normalize_backend_url
from synth_nb.errors import ConfigError
from synth_nb.job import Job
from synth_nb.local.backend_info import BackendInfo, process_alive, read_info
from synth_nb.local.shared import default_data_dir

__all__ = ["OUTAGE_CHECK", "embedded_process", "gone_message", "report_outages", "unreachable_since"]

#: how often the jobs' clients (and the embedded backend's process) are looked at: an attribute read, a signal 0
OUTAGE_CHECK = 0.5


def unreachable_since(jobs: Sequence[Job]) -> datetime | None:
    """The earliest moment one of the unfinished jobs' clients stopped getting answers."""
    times = [since for job in jobs if not job.done and (since := job.unreachable_since) is not None]
    return min(times) if times else None


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes} min" if minutes else f"{int(seconds)} s"


def embedded_process(jobs: Sequence[Job]) -> BackendInfo | None:
    """What this folder's embedded backend's info file says (its pid, data folder) when the jobs' backend is
    that process; else None: a remote backend, or one running inside this process (it cannot die without
    this command)."""
    info = read_info(default_data_dir())
    if info is None or not jobs:
        return None
    try:
        url = normalize_backend_url(info.url)
    except ConfigError:
        return None
    return info if all(job.client.base_url == url for job in jobs) else None


def _commands(jobs: Sequence[Job]) -> tuple[str, str]:
    """``synth-nb attach ID`` / ``synth-nb cancel ID`` for the unfinished jobs (``ID`` named once for several)."""
    ids = [job.id for job in jobs if not job.done] or [job.id for job in jobs]
    if len(ids) == 1:
        return f"synth-nb attach {ids[0]}", f"synth-nb cancel {ids[0]}"
    return "synth-nb attach ID", f"synth-nb cancel ID (ID: {', '.join(ids)})"


def gone_message(process: BackendInfo, jobs: Sequence[Job]) -> str:
    """What the user reads when the embedded backend's process has ended under running jobs."""
    ids = [job.id for job in jobs if not job.done]
    following = f" while job {ids[0]} was running" if len(ids) == 1 else (
        f" while jobs {', '.join(ids)} were running" if ids else "")
    lines = [f"error: the embedded backend (pid {process.pid}, data in {process.data_dir}) has stopped{following}; "
             "nothing more can come from it, so following ends here."]
    lines += [f"  synth-nb attach {job_id}   restarts it and shows how the job ended" for job_id in ids]
    return "\n".join(lines)


async def report_outages(jobs: Sequence[Job], say: Callable[[str], None], *, every: float = 60.0,
                         process: BackendInfo | None = None) -> None:
    """Until cancelled: ``backend unreachable since HH:MM:SS, retrying`` (with how to attach to or cancel the
    job later) when the backend stops answering, again every ``every`` seconds while it does not, then
    ``backend reachable again``. Returns only when ``process`` (default: the embedded backend's, if the jobs
    use it) has ended, after saying so."""
    process = process or embedded_process(jobs)
    attach, cancel = _commands(jobs)
    said_at: float | None = None
    while True:
        if process is not None and any(not job.done for job in jobs) and not process_alive(process):
            say(gone_message(process, jobs))
            return
        since = unreachable_since(jobs)
        now = time.monotonic()
        if since is None:
            if said_at is not None:
                say("backend reachable again")
                said_at = None
        elif said_at is None or now - said_at >= every:
            down = datetime.now(since.tzinfo) - since
            lasting = f" ({_duration(down.total_seconds())})" if said_at is not None else ""
            say(f"backend unreachable since {since:%H:%M:%S}{lasting}, retrying; to follow the job again later: "
                f"{attach}; to cancel it: {cancel}")
            said_at = now
        await asyncio.sleep(OUTAGE_CHECK)
