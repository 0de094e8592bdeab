"""Server-Sent Events for job event logs (the framing the hosted backend uses).

Framing: ``id: <seq>``, ``event: <type>``, one single-line JSON ``data:`` per event, blank line after each,
``: keep-alive`` comments while idle. Resume with ``?since_seq=N`` or the ``Last-Event-ID`` header.
The stream closes once the job is terminal and every event has been sent.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, nullcontext

from starlette.requests import Request
from starlette.responses import StreamingResponse

from synth_nb.local.server.http import ApiError
from synth_nb.local.storage import Storage

__all__ = ["JobSignals", "sse_response", "wants_sse"]

_BATCH = 500
#: after sending live events, wait this long before reading again, so a busy job's follower gets one
#: write per interval instead of one per commit (100 followers of a job at 500 events/s would otherwise
#: each wake hundreds of times a second); well inside what a person or a chart can tell apart
_LINGER_SECONDS = 0.02
#: the wait once events kept coming during the last one (a steady stream): a follower at 100 events/s
#: then reads 10 times a second instead of 50, each read a bigger page. The first event after a quiet
#: spell is still sent at once, so a lone event's latency does not change.
_BUSY_LINGER_SECONDS = 0.1

Waiter = tuple[asyncio.AbstractEventLoop, asyncio.Event]


class JobSignals:
    """Wakes SSE streams (on their event loops) when storage commits something for their job (any thread).

    Notifications for a loop that has not run its last wake-up yet are merged into it: one
    ``call_soon_threadsafe`` per loop however many jobs and followers changed meanwhile.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, set[Waiter]] = {}
        self._due: dict[asyncio.AbstractEventLoop, set[asyncio.Event]] = {}
        #: set when the server stops: open streams end instead of holding the shutdown up
        self.closed = False

    def close(self) -> None:
        self.closed = True
        with self._lock:
            job_ids = list(self._waiters)
        for job_id in job_ids:
            self.notify(job_id)

    def notify(self, job_id: str) -> None:
        scheduled = []
        with self._lock:
            for loop, event in self._waiters.get(job_id, ()):
                due = self._due.get(loop)
                if due is None:
                    due = self._due[loop] = set()
                    scheduled.append(loop)
                due.add(event)
        for loop in scheduled:
            try:
                loop.call_soon_threadsafe(self._wake, loop)
            except RuntimeError:  # loop already closed
                with self._lock:
                    self._due.pop(loop, None)

    def _wake(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            events = self._due.pop(loop, set())
        for event in events:
            event.set()

    def subscribe(self, job_id: str) -> Waiter:
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.setdefault(job_id, set()).add(entry)
        return entry

    def followed(self, job_id: str) -> bool:
        """Whether an event stream of ``job_id`` is open."""
        with self._lock:
            return bool(self._waiters.get(job_id))

    def unsubscribe(self, job_id: str, entry: Waiter) -> None:
        with self._lock:
            waiters = self._waiters.get(job_id)
            if waiters is not None:
                waiters.discard(entry)
                if not waiters:
                    del self._waiters[job_id]


def wants_sse(request: Request) -> bool:
    return "text/event-stream" in request.headers.get("accept", "")


def _start_seq(request: Request) -> int:
    raw = request.query_params.get("since_seq") or request.headers.get("last-event-id") or "0"
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(422, f"since_seq / Last-Event-ID must be an integer, got {raw!r}") from None
    return max(value, 0)


def sse_response(request: Request, storage: Storage, signals: JobSignals, job_id: str,
                 keepalive_seconds: float, watching: AbstractContextManager[object] | None = None) -> StreamingResponse:
    """Stream ``job_id``'s events after the requested seq, live, until the job is terminal; ``watching`` is
    entered while the stream is open (``status_reads`` counts who follows a job)."""
    since = _start_seq(request)

    async def frames() -> AsyncIterator[str]:
        entry = signals.subscribe(job_id)
        watched = watching or nullcontext()
        watched.__enter__()
        cursor, streaming = since, False
        try:
            yield ": connected\n\n"
            while True:
                entry[1].clear()
                last, text = storage.sse_frames(job_id, cursor, _BATCH)
                if text:  # one write per batch: far cheaper than one per event
                    caught_up, cursor = last - cursor < _BATCH, last
                    yield text
                    if caught_up:
                        await asyncio.sleep(_BUSY_LINGER_SECONDS if streaming else _LINGER_SECONDS)
                        streaming = True  # set after a wait: a next page means events keep coming
                    continue
                streaming = False
                job = storage.get_job(job_id)
                if signals.closed or job is None or (job.terminal and not storage.event_records(job_id, cursor, 1)):
                    return
                try:
                    await asyncio.wait_for(entry[1].wait(), timeout=keepalive_seconds)
                except TimeoutError:
                    yield ": keep-alive\n\n"
        finally:
            watched.__exit__(None, None, None)
            signals.unsubscribe(job_id, entry)

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(frames(), media_type="text/event-stream", headers=headers)
