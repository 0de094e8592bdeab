"""Server-Sent Events for job event logs (the framing the hosted backend uses).

Framing: ``id: <seq>``, ``event: <type>``, one single-line JSON ``data:`` per event, blank line after each,
``: keep-alive`` comments while idle. Resume with ``?since_seq=N`` or the ``Last-Event-ID`` header.
The stream closes once the job is terminal and every event has been sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import StreamingResponse

from synth_nb.local.server.http import ApiError
from synth_nb.local.storage import Storage

__all__ = ["JobSignals", "sse_response", "wants_sse"]

_BATCH = 500


class JobSignals:
    """Wakes SSE streams (on the event loop) when storage commits something for their job (any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        #: set when the server stops: open streams end instead of holding the shutdown up
        self.closed = False

    def close(self) -> None:
        self.closed = True
        with self._lock:
            job_ids = list(self._waiters)
        for job_id in job_ids:
            self.notify(job_id)

    def notify(self, job_id: str) -> None:
        with self._lock:
            waiters = list(self._waiters.get(job_id, ()))
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(event.set)

    def subscribe(self, job_id: str) -> tuple[asyncio.AbstractEventLoop, asyncio.Event]:
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.setdefault(job_id, set()).add(entry)
        return entry

    def unsubscribe(self, job_id: str, entry: tuple[asyncio.AbstractEventLoop, asyncio.Event]) -> None:
        with self._lock:
            waiters = self._waiters.get(job_id)
            if waiters is not None:
                waiters.discard(entry)
                if not waiters:
                    del self._waiters[job_id]


def wants_sse(request: Request) -> bool:
    return "text/event-stream" in request.headers.get("accept", "")


def _frame(event: dict[str, Any]) -> str:
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n"


def _start_seq(request: Request) -> int:
    raw = request.query_params.get("since_seq") or request.headers.get("last-event-id") or "0"
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(422, f"since_seq / Last-Event-ID must be an integer, got {raw!r}") from None
    return max(value, 0)


def sse_response(request: Request, storage: Storage, signals: JobSignals, job_id: str,
                 keepalive_seconds: float) -> StreamingResponse:
    """Stream ``job_id``'s events after the requested seq, live, until the job is terminal."""
    since = _start_seq(request)

    async def frames() -> AsyncIterator[str]:
        entry = signals.subscribe(job_id)
        cursor = since
        try:
            yield ": connected\n\n"
            while True:
                entry[1].clear()
                batch = storage.events(job_id, cursor, _BATCH)
                if batch:  # one write per batch: far cheaper than one per event
                    cursor = batch[-1]["seq"]
                    yield "".join(_frame(event) for event in batch)
                    continue
                job = storage.get_job(job_id)
                if signals.closed or job is None or (job.terminal and not storage.events(job_id, cursor, 1)):
                    return
                try:
                    await asyncio.wait_for(entry[1].wait(), timeout=keepalive_seconds)
                except TimeoutError:
                    yield ": keep-alive\n\n"
        finally:
            signals.unsubscribe(job_id, entry)

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(frames(), media_type="text/event-stream", headers=headers)
