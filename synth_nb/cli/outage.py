"""Say when the backend stops answering while jobs are followed, keep saying it, and say when it is back.

Without this a backend outage is silence for as long as ``--poll-timeout`` (an hour by default): the
client keeps retrying, which is right, but the user cannot tell a quiet job from a dead connection. The
notice reads ``Job.unreachable_since``, the same signal a notebook panel can show.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import datetime

from synth_nb.job import Job

__all__ = ["OUTAGE_CHECK", "report_outages", "unreachable_since"]

#: how often the jobs' clients are looked at (cheap: an attribute read)
OUTAGE_CHECK = 0.5


def unreachable_since(jobs: Sequence[Job]) -> datetime | None:
    """The earliest moment one of the unfinished jobs' clients stopped getting answers."""
    times = [since for job in jobs if not job.done and (since := job.unreachable_since) is not None]
    return min(times) if times else None


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes} min" if minutes else f"{int(seconds)} s"


async def report_outages(jobs: Sequence[Job], say: Callable[[str], None], *, every: float = 60.0) -> None:
    """Run until cancelled: ``backend unreachable since HH:MM:SS, retrying`` when the backend stops
    answering and again every ``every`` seconds while it does not, then ``backend reachable again``."""
    said_at: float | None = None
    while True:
        since = unreachable_since(jobs)
        now = time.monotonic()
        if since is None:
            if said_at is not None:
                say("backend reachable again")
                said_at = None
        elif said_at is None or now - said_at >= every:
            down = datetime.now(since.tzinfo) - since
            lasting = f" ({_duration(down.total_seconds())})" if said_at is not None else ""
            say(f"backend unreachable since {since:%H:%M:%S}{lasting}, retrying")
            said_at = now
        await asyncio.sleep(OUTAGE_CHECK)
