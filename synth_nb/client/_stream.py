"""Follow a job's events: SSE on the flow's ``events_stream`` path when offered, else adaptive polling.

Either way the cursor is the last seq seen, so every reconnect resumes exactly where it stopped and a
consumer never sees an event twice or misses one. Polling is fast while events flow and backs off when
idle, never slower than ``poll_interval``. The stream needs only a ``StreamClient`` (paged reads, one
retried request, an httpx client for SSE connections), not the whole ``AsyncSynthClient``.

Events travel as compact ``EventRecord``s; a sink gets one pydantic ``Event`` at a time unless the stream
is made with ``pages=True``: then it gets each batch of fresh records as one list (a job's history stores
records a page at a time and builds models only when asked).
"""

from __future__ import annotations

import asyncio
import json
import operator
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol, TypeVar

import httpx
from httpx_sse import SSEError, aconnect_sse

from synth_nb.client._bounds import MAX_ANSWER_BYTES, read_bounded, too_deep
from synth_nb.client._lenient import parse_events
from synth_nb.client._parse import EventRecord, SeqNumbering, strict_event_record
from synth_nb.client._retry import ErrorStatus
from synth_nb.client._shared import path_segment
from synth_nb.client._sse import SseFrame, SseSplitter
from synth_nb.contract import FlowEndpoints
from synth_nb.errors import TRANSIENT_ERRORS, BackendAnswerError
from synth_nb.records import TERMINAL_STATUSES, Event, normalize_status

__all__ = ["TRANSIENT_ERRORS", "EventStream", "StreamClient"]

T = TypeVar("T")


EventSink = Callable[[Event], Any] | Callable[[list[EventRecord]], Any]
FrameSink = Callable[[str, dict[str, Any]], Any]

_UNSUPPORTED = (404, 405, 406, 501)
_SEQ = operator.attrgetter("seq")
#: page size when fetching history: the local backend's maximum (fewer round trips; others may cap it)
DRAIN_PAGE = 10_000
#: the most events one drain reads (5x the longest history measured, ~200 MiB held): a backend whose pages
#: always bring new events would otherwise be read until memory runs out
HISTORY_CAP = 5_000_000
_NON_EVENT_FRAMES = frozenset({"status", "metric", "metrics", "heartbeat"})


class StreamClient(Protocol):
    """What an ``EventStream`` uses from a client; ``AsyncSynthClient`` is one."""

    @property
    def stream_http(self) -> httpx.AsyncClient: ...

    @property
    def sse_timeout(self) -> httpx.Timeout: ...

    def url_for(self, path: str) -> str: ...

    async def retrying(self, method: str, url: str, send: Callable[[], Awaitable[T]], *,
                       replay_safe: bool = True, wait_max: float | None = None) -> T: ...

    async def get_event_records(self, endpoints: FlowEndpoints, job_id: str, since_seq: int = 0,
                                limit: int = 200, *, ahead: Callable[[int], object] | None = None
                                ) -> list[EventRecord]: ...

    async def get_status(self, endpoints: FlowEndpoints, job_id: str) -> dict[str, Any]: ...

    def numbering(self, job_id: str) -> SeqNumbering: ...


class EventStream:
    """One job's event feed with a resumable seq cursor.

    ``run(sink)`` pushes events to ``sink`` until the job is terminal and drained. With
    ``until_terminal=False`` polling never asks for the status itself (a ``Job`` does that and cancels
    the stream); an SSE stream that the server closes is always followed by a status check.
    """

    def __init__(
        self,
        client: StreamClient,
        endpoints: FlowEndpoints,
        job_id: str,
        *,
        since_seq: int = 0,
        poll_interval: float = 5.0,
        min_interval: float = 0.05,
        limit: int = 1000,
        use_sse: bool = True,
        until_terminal: bool = True,
        on_frame: FrameSink | None = None,
        pages: bool = False,
    ) -> None:
        self.client = client
        self.endpoints = endpoints
        self.job_id = job_id
        self.last_seq = since_seq
        self.poll_interval = max(poll_interval, min_interval)
        self.min_interval = min_interval
        self.limit = limit
        self.until_terminal = until_terminal
        self.on_frame = on_frame
        #: sinks get lists of fresh ``EventRecord``s instead of one ``Event`` at a time
        self.pages = pages
        #: "sse" or "poll" once known; SSE is tried first when the flow has a stream path
        self.mode: str | None = None if use_sse and self.endpoints.events_stream else "poll"
        self.reconnects = 0
        #: the waiting primitive (tests substitute a recorder)
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        #: the most events one ``drain`` reads
        self.history_cap = HISTORY_CAP
        self._progressed = False

    # -- public ---------------------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def run(self, sink: EventSink) -> None:
        idle_closes = 0
        while True:
            if self.mode != "poll":
                outcome = await self._sse_with_retry(sink)
                if outcome == "unsupported":
                    self.mode = "poll"
                    continue
                self.mode = "sse"
                if await self._is_terminal():
                    await self.drain(sink)
                    return
                self.reconnects += 1
                idle_closes = 0 if self._progressed else idle_closes + 1
                await self.sleep(min(self.poll_interval, self.min_interval * 2**idle_closes))
                continue
            await self._poll(sink)
            return

    async def drain(self, sink: EventSink) -> int:
        """Fetch every event after the cursor by plain polling (used once the job is terminal).

        The next page is asked for before a page is kept: when the answer states its ``next_seq``, before it is
        read, else once it is read, after the newest seq on it; the backend makes it meanwhile. It is the page a
        one-at-a-time reader asks for next (keeping a page moves the cursor to its newest new seq); one asked
        for at another cursor is dropped and the page asked for again (and ``next_seq`` no longer heeded)."""
        count, limit, heeded = 0, max(self.limit, DRAIN_PAGE), True
        ahead: tuple[int, asyncio.Future[list[EventRecord]]] | None = None

        def ask(cursor: int) -> None:  # one page ahead at most: a later hint waits for its page's turn
            nonlocal ahead
            if ahead is None and heeded:
                ahead = (cursor, asyncio.ensure_future(self._page(cursor, limit, ask)))

        try:
            while True:  # until an empty page: a backend may cap ``limit`` below what we asked for
                if ahead is not None and ahead[0] == self.last_seq:
                    asked, ahead = ahead[1], None
                    events = await asked
                else:
                    _drop(ahead)
                    ahead = None
                    events = await self._page(self.last_seq, limit, ask)
                newest = max(map(_SEQ, events), default=self.last_seq)
                if newest > self.last_seq and (ahead is None or ahead[0] != newest):
                    heeded = heeded and ahead is None  # a stated cursor that is not the reader's: ask at its own
                    _drop(ahead)
                    ahead = (newest, asyncio.ensure_future(self._page(newest, limit, ask)))
                    await asyncio.sleep(0)  # the request goes out before this page is kept
                fresh = self._emit(events, sink)
                count += fresh
                if fresh == 0:
                    return count
                if count >= self.history_cap:
                    raise BackendAnswerError(f"job {self.job_id}: the backend keeps sending new history: {count:,} "
                                             f"events so far; stopped reading it at {self.history_cap:,}")
        finally:
            _drop(ahead)

    def _page(self, since_seq: int, limit: int, ahead: Callable[[int], None]) -> Awaitable[list[EventRecord]]:
        return self.client.get_event_records(self.endpoints, self.job_id, since_seq=since_seq, limit=limit,
                                             ahead=ahead)

    # -- internals ------------------------------------------------------------------------------

    async def _iterate(self) -> AsyncIterator[Any]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        task = asyncio.ensure_future(self.run(queue.put_nowait))
        task.add_done_callback(lambda _t: queue.put_nowait(None))
        try:
            while True:
                item = await queue.get()
                if item is None:
                    break
                yield item
            await task  # surface errors
        finally:
            if not task.done():
                task.cancel()

    def _emit(self, events: list[EventRecord], sink: EventSink) -> int:
        if len(events) == 1:  # an SSE frame
            fresh = events if events[0].seq > self.last_seq else []
            return self._deliver(fresh, sink)
        seqs = [*map(_SEQ, events)]
        if any(map(operator.gt, seqs, seqs[1:])):
            events = sorted(events, key=_SEQ)  # the contract says ascending; be safe anyway
            seqs.sort()
        if seqs and seqs[0] > self.last_seq and all(map(operator.lt, seqs, seqs[1:])):
            fresh = events  # the usual page: all new, each seq once
        else:
            fresh, last = [], self.last_seq
            for event in events:
                if event.seq > last:
                    last = event.seq
                    fresh.append(event)
        return self._deliver(fresh, sink)

    def _deliver(self, fresh: list[EventRecord], sink: EventSink) -> int:
        if fresh:
            self.last_seq = fresh[-1].seq
            if self.pages:
                sink(fresh)  # type: ignore[arg-type]
            else:
                for event in fresh:
                    sink(event.to_event())  # type: ignore[arg-type]
        return len(fresh)

    async def _is_terminal(self) -> bool:
        doc = await self.client.get_status(self.endpoints, self.job_id)
        return normalize_status(doc.get("status") or doc.get("state")) in TERMINAL_STATUSES

    def _stream_url(self) -> str:
        path = (self.endpoints.events_stream or "").replace("{job_id}", path_segment(self.job_id))
        return self.client.url_for(path)

    async def _sse_with_retry(self, sink: EventSink) -> str:
        return await self.client.retrying("GET", self._stream_url(), lambda: self._sse_once(sink), wait_max=5.0)

    async def _sse_once(self, sink: EventSink) -> str:
        """One SSE connection: "unsupported", or "closed" when it ended (cleanly or after progress)."""
        url = self._stream_url()
        headers = {"Last-Event-ID": str(self.last_seq)} if self.last_seq else {}
        progressed = self._progressed = False
        try:
            async with aconnect_sse(
                self.client.stream_http, "GET", url, params={"since_seq": self.last_seq}, headers=headers,
                timeout=self.client.sse_timeout,
            ) as source:
                response = source.response
                if response.status_code in _UNSUPPORTED:
                    return "unsupported"
                if response.status_code >= 400:
                    content = await read_bounded(response)
                    raise ErrorStatus(httpx.Response(response.status_code, content=content, request=response.request))
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    return "unsupported"
                self.mode = "sse"  # decided as soon as the backend streams, not when the stream ends
                splitter = SseSplitter(max_frame=MAX_ANSWER_BYTES)
                async for chunk in response.aiter_bytes():
                    if self._handle_frames(splitter.feed(chunk), sink):
                        progressed = self._progressed = True
        except (httpx.TransportError, SSEError, ValueError) as exc:
            if progressed:
                return "closed"
            if isinstance(exc, httpx.TransportError):
                raise
            raise httpx.RemoteProtocolError(f"malformed event stream ({type(exc).__name__})") from None
        return "closed"

    def _handle_frames(self, frames: list[SseFrame], sink: EventSink) -> bool:
        """The frames of one read: well-formed events go to ``sink`` as one page, the rest one by one, in order."""
        progressed, page = False, []
        for name, data, frame_id in frames:
            if too_deep(data):  # like a truncated frame: the stream is read again from the cursor
                raise ValueError("an event-stream frame nested too deep")
            if name not in _NON_EVENT_FRAMES:
                record = strict_event_record(data)  # fast path: a well-formed event frame
                if record is not None:
                    page.append(record)
                    continue
            if page:
                progressed = self._emit(page, sink) > 0 or progressed
                page = []
            progressed = self._handle_frame(name, data, frame_id, sink) or progressed
        if page:
            progressed = self._emit(page, sink) > 0 or progressed
        return progressed

    def _handle_frame(self, name: str, data: bytes, frame_id: str | None, sink: EventSink) -> bool:
        """A frame off the fast path: status, metrics, heartbeats, or an event that needs lenient parsing."""
        payload = json.loads(data)  # a truncated frame raises ValueError -> reconnect from the cursor
        if not isinstance(payload, dict) and name in _NON_EVENT_FRAMES:
            return False
        if name in _NON_EVENT_FRAMES:
            if self.on_frame is not None:
                self.on_frame(name, payload)
            return True
        if isinstance(payload, dict) and payload.get("seq") is None and frame_id and frame_id.isdigit():
            payload["seq"] = int(frame_id)
        [event] = parse_events([payload], self.last_seq, self.client.numbering(self.job_id))
        return self._emit([EventRecord.of(event)], sink) > 0

    async def _poll(self, sink: EventSink) -> None:
        interval = self.min_interval
        while True:
            try:
                events = await self.client.get_event_records(
                    self.endpoints, self.job_id, since_seq=self.last_seq, limit=self.limit
                )
            except TRANSIENT_ERRORS:
                interval = min(self.poll_interval, interval * 2)
                await self.sleep(interval)
                continue
            fresh = self._emit(events, sink)
            if fresh:
                interval = self.min_interval
                if len(events) >= self.limit:
                    continue
            else:
                if self.until_terminal:
                    try:
                        if await self._is_terminal():
                            await self.drain(sink)
                            return
                    except TRANSIENT_ERRORS:
                        pass
                interval = min(self.poll_interval, interval * 1.5)
            await self.sleep(interval)


def _drop(ahead: tuple[int, asyncio.Future[Any]] | None) -> None:
    """Cancel a page asked for ahead that is not read (its failure, if it failed, is not this reader's)."""
    if ahead is not None:
        ahead[1].cancel()
        ahead[1].add_done_callback(lambda done: done.cancelled() or done.exception())
