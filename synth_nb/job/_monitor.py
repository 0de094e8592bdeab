"""Keep a ``JobHistory`` current from the backend: events by SSE or polling, status and metrics by polling.

The monitor rides out transient errors (network, 5xx, 429 after the client's own retries) and stops on
anything else, which the ``Job`` then raises from ``wait()``. Once the status is terminal it drains every
remaining event and metric, so a finished job's history is complete.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from synth_nb.client import TRANSIENT_ERRORS, AsyncSynthClient, EventStream, parse_metric_records
from synth_nb.contract import FlowEndpoints
from synth_nb.errors import NotFoundError
from synth_nb.job._find import linked_job_id
from synth_nb.job.history import JobHistory

__all__ = ["BACKFILL_PAGE", "PollSettings", "JobMonitor"]

#: page size when paging through metric history (the local backend's maximum; others may cap it lower)
BACKFILL_PAGE = 10_000
#: how often the final drain is retried through transient errors
FINAL_SYNC_ATTEMPTS = 20
#: status and metrics polling floor while events arrive by SSE (seconds): the stream brings every event as it
#: happens and its close tells the end, so only metrics wait for this, and they are shown about once a
#: second anyway (the CLI's metric lines, the panel's values table); polling each job 5 times a second cost
#: a 20-job follower more CPU than the events themselves
STREAMED_POLL = 1.0


@dataclass(frozen=True)
class PollSettings:
    """How a job is followed: polling ceiling and floor (seconds), SSE or not, newest-metrics page size."""

    poll_interval: float = 5.0
    min_interval: float = 0.05
    use_sse: bool = True
    metrics_limit: int = 200


class JobMonitor:
    """One run of following a job through one client (a ``Job`` makes a new one after ``rebind``)."""

    def __init__(self, history: JobHistory, client: AsyncSynthClient, endpoints: FlowEndpoints,
                 options: PollSettings, *, linked: Callable[[str], Awaitable[None]] | None = None) -> None:
        self.history = history
        #: called with the ``linked_job_id`` the status document names, after every status read
        self.linked = linked
        self.client = client
        self.endpoints = endpoints
        self.options = options
        #: "sse" or "poll" once the event stream has decided
        self.stream_mode: str | None = None
        #: True once no metric path answered (the backend keeps no metrics for this job)
        self.no_metrics = False
        #: True once no timeline path answered (or the flow declares none)
        self.no_timeline = not endpoints.timeline

    def make_stream(self) -> EventStream:
        opts = self.options
        return EventStream(
            self.client, self.endpoints, self.history.id, since_seq=self.history.last_seq,
            poll_interval=opts.poll_interval, min_interval=opts.min_interval, use_sse=opts.use_sse,
            until_terminal=False, on_frame=self._on_frame, pages=True,
        )

    async def refresh(self) -> None:
        """One full sync: status, every event after the cursor, every metric."""
        job = self.history
        job.ingest_status(await self.client.get_status(self.endpoints, job.id))
        await self._sync_timeline()
        await self._sync_linked()
        stream = self.make_stream()
        await self._events_and_metrics(stream)
        if job.terminal:
            await stream.drain(job.ingest_events)

    async def run(self) -> None:
        """Follow until the status is terminal and the history is drained; non-transient errors propagate."""
        job, opts = self.history, self.options
        stream = self.make_stream()
        self.stream_mode = stream.mode
        events_task = asyncio.ensure_future(self._follow_events(stream))
        interval = opts.min_interval
        try:
            while not job.terminal:
                seen = len(job.events)
                changed = False
                try:
                    changed = job.ingest_status(await self.client.get_status(self.endpoints, job.id))
                    if changed:  # the timeline's phases are status changes: read it when one happens
                        await self._sync_timeline()
                    await self._sync_linked()
                    changed = await self._sync_metrics() or changed
                except TRANSIENT_ERRORS:
                    interval = min(opts.poll_interval, interval * 2)
                self.stream_mode = stream.mode
                if job.terminal:
                    break
                active = changed or len(job.events) != seen
                floor = max(4 * opts.min_interval, STREAMED_POLL if stream.mode == "sse" else 0.0)
                interval = floor if active else min(opts.poll_interval, max(interval, floor) * 1.5)
                await self._pause(events_task, interval)
        finally:
            events_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):  # its error, if any, was raised above
                await events_task
        self.stream_mode = stream.mode
        await self._final_sync(stream)

    async def _pause(self, events_task: asyncio.Future[None], interval: float) -> None:
        """Wait ``interval`` (less if the event stream ends); a failed stream raises its error."""
        if not events_task.done():
            await asyncio.wait({events_task}, timeout=interval)
            return
        error = events_task.exception()  # the stream saw the end (or failed): only the status is left
        if error is not None:
            raise error
        await asyncio.sleep(interval)

    def _on_frame(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "status":
            self.history.ingest_status(payload)
        elif kind in ("metric", "metrics"):
            self.history.ingest_metrics(parse_metric_records(payload.get("points") or [payload]))

    async def _follow_events(self, stream: EventStream) -> None:
        backoff = self.options.min_interval
        while True:
            try:
                await stream.run(self.history.ingest_events)
                self.stream_mode = stream.mode
                return
            except TRANSIENT_ERRORS:
                stream.last_seq = self.history.last_seq
                backoff = min(self.options.poll_interval, backoff * 2)
                await asyncio.sleep(backoff)

    async def _sync_linked(self) -> None:
        linked = linked_job_id(self.history.status_doc, self.history.id)
        if linked is not None and self.linked is not None:
            await self.linked(linked)

    async def _sync_timeline(self) -> None:
        """Read the job's timeline (its phases); a flow or backend without one is not asked again."""
        if self.no_timeline:
            return
        try:
            self.history.ingest_timeline(await self.client.get_timeline(self.endpoints, self.history.id))
        except NotFoundError:  # 0.2.24 ignores it too
            self.no_timeline = True

    async def _sync_metrics(self) -> bool:
        """Read the newest points; if none of them were known, page back from the oldest name cursor."""
        job, limit = self.history, self.options.metrics_limit
        if self.no_metrics:
            return False
        try:
            points = await self.client.get_metric_records(self.endpoints, job.id, limit=limit)
        except NotFoundError:  # no metric path answers (0.2.24 ignores it too): the job has no metrics
            self.no_metrics = True
            return False
        had_any = bool(job.metrics)
        fresh = job.ingest_metrics(points)
        if len(points) >= limit and fresh == len(points):
            steps = job.last_steps
            start = min(steps.values()) - 1 if had_any and steps else -1
            await self._backfill_metrics(start)  # the newest page may not reach back to what we have
        return fresh > 0

    async def _backfill_metrics(self, cursor: int = -1) -> None:
        """Page through every point with ``step > cursor`` (``after_step`` ascending)."""
        while not self.no_metrics:
            try:
                page = await self.client.get_metric_records(self.endpoints, self.history.id, after_step=cursor,
                                                            limit=BACKFILL_PAGE)
            except NotFoundError:
                self.no_metrics = True
                return
            self.history.ingest_metrics(page)
            top = max((p.step for p in page), default=cursor)
            if top <= cursor:  # an empty page (a backend may cap ``limit``), or one that ignores ``after_step``
                return
            cursor = top - 1 if top - 1 > cursor else top  # re-read the boundary step: names may share it

    async def _events_and_metrics(self, stream: EventStream) -> None:
        """Drain the events and page through the metrics side by side: the backend serves one page while
        this process parses the other (one after the other, a long job's attach took their sum)."""
        events = asyncio.ensure_future(stream.drain(self.history.ingest_events))
        try:
            await self._backfill_metrics()
            await events
        finally:
            if not events.done():
                events.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await events
            elif not events.cancelled():
                events.exception()  # retrieved: the metrics' error, if any, is the one raised

    async def _final_sync(self, stream: EventStream) -> None:
        """After a terminal status: fetch every remaining event and metric, riding out transient errors."""
        opts = self.options
        for attempt in range(FINAL_SYNC_ATTEMPTS):
            try:
                stream.last_seq = self.history.last_seq
                await self._sync_timeline()
                await self._sync_linked()
                await self._events_and_metrics(stream)
                return
            except TRANSIENT_ERRORS:
                if attempt == FINAL_SYNC_ATTEMPTS - 1:
                    raise  # surfaces in wait(): the history may be incomplete, so do not pretend otherwise
                await asyncio.sleep(min(opts.poll_interval, opts.min_interval * 2**attempt))
