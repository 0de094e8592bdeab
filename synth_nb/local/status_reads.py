"""When each running job's status document was last served, so its end can wait for one more read.

synth-ai 0.3.9+ stop at the first terminal event they see and print the status document they polled last
(every 2 s, beside the event stream). A job's results (``best_score``, ``fine_tuned_model``…) are filled just
before that event, milliseconds earlier, so without a wait the printed document is one from before the
results. ``wait_for_next`` holds the terminal event until the status has been served once more, but only
for a job someone polls lately or follows by its event stream (their first poll may come 2 s after the
stream opened: a short job ends sooner) or another client created or started lately (a job of a few tenths
of a second ends before its creator's stream is open: 0.5.0 then printed a status without results), and
never longer than about one polling interval.

synth-nb's own client (``User-Agent: synth-nb/…``) reads the status once more after the job's end itself,
so its reads and streams are not counted: its jobs end without waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["StatusReads"]

#: a job whose status was not read for this long has no poller to wait for
RECENT = 5.0
#: the longest a job's end waits for a read (0.5.0 polls every 2 s, plus a loaded machine's slack)
MAX_WAIT = 3.0
#: the polling interval assumed from a single read
ASSUMED_GAP = 2.0


class StatusReads:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._reads: dict[str, tuple[float, float | None]] = {}  # job id -> (last read, the gap before it)
        self._streams: dict[str, int] = {}  # job id -> event streams open
        self._begun: dict[str, float] = {}  # job id -> when another client created or started it

    @contextmanager
    def following(self, job_id: str) -> Iterator[None]:
        """While an event stream of ``job_id`` is open."""
        with self._cond:
            self._streams[job_id] = self._streams.get(job_id, 0) + 1
        try:
            yield
        finally:
            with self._cond:
                left = self._streams.pop(job_id, 1) - 1
                if left:
                    self._streams[job_id] = left

    def note(self, job_id: str, now: float) -> None:
        """The status document of ``job_id`` is served from a read of the job made at ``now`` (monotonic)."""
        with self._cond:
            last = self._reads.get(job_id)
            self._reads[job_id] = (now, now - last[0] if last else None)
            self._cond.notify_all()

    def begun_by_client(self, job_id: str, now: float) -> None:
        """Another client (not synth-nb's) created or started ``job_id`` at ``now``: it is about to follow it."""
        with self._cond:
            self._begun[job_id] = now

    def forget(self, job_id: str) -> None:
        with self._cond:
            self._reads.pop(job_id, None)
            self._begun.pop(job_id, None)

    def watched(self, job_id: str) -> bool:
        """Whether someone follows ``job_id``: an event stream open, or a status read lately."""
        with self._cond:
            return self._watched(job_id, time.monotonic())

    def _watched(self, job_id: str, now: float) -> bool:
        found, begun = self._reads.get(job_id), self._begun.get(job_id)
        return (job_id in self._streams or (found is not None and now - found[0] <= RECENT)
                or (begun is not None and now - begun <= RECENT))

    def wait_for_next(self, job_id: str, stop: threading.Event) -> None:
        """Return once the status of ``job_id`` is served again, at once when nobody polls it, or when
        ``stop`` is set; at most about one polling interval (never over ``MAX_WAIT``)."""
        start = time.monotonic()
        with self._cond:
            if not self._watched(job_id, start):
                return
            found = self._reads.get(job_id)
            gap = found[1] if found is not None and found[1] is not None else ASSUMED_GAP
            deadline = start + min(MAX_WAIT, 1.5 * gap + 0.25)
            while not stop.is_set():
                remaining = deadline - time.monotonic()
                if self._reads.get(job_id, (0.0, None))[0] > start or remaining <= 0:
                    return
                self._cond.wait(min(remaining, 0.25))
