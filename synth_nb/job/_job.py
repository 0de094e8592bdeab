"""``Job``: one backend job's state (status, events, metrics) kept current by a background monitor.

Events are deduplicated by seq and metrics by (name, step), both kept in order, so reconnects, retries
and overlapping polls can never show the same thing twice. Consumers: ``wait()``, ``updates()``
(history first, then live), listeners (CLI printer, recorder), the notebook panel.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from synth_nb.client._stream import TRANSIENT_ERRORS, EventStream
from synth_nb.errors import (
    ConfigError,
    JobCancelledError,
    JobFailedError,
    JobTimeoutError,
    NotFoundError,
    SynthNbError,
)
from synth_nb.records import TERMINAL_STATUSES, Event, MetricPoint, normalize_status

if TYPE_CHECKING:
    from synth_nb.client._client import AsyncSynthClient
    from synth_nb.job.registry import JobRegistry

__all__ = ["Job", "JobUpdate"]

#: page size when paging through metric history
BACKFILL_PAGE = 5000

UpdateKind = Literal["status", "event", "metric", "done"]


@dataclass(frozen=True)
class JobUpdate:
    """One change to a job, in the order it was observed."""

    kind: UpdateKind
    status: str
    event: Event | None = None
    metric: MetricPoint | None = None


class Job:
    """A submitted or re-attached job; call ``start_monitoring()`` / ``await wait()`` to follow it."""

    def __init__(
        self,
        id: str,
        flow: str,
        client: AsyncSynthClient,
        *,
        algorithm: str | None = None,
        backend_url: str | None = None,
        poll_interval: float = 5.0,
        min_interval: float = 0.05,
        use_sse: bool = True,
        registry: JobRegistry | None = None,
        metrics_limit: int = 200,
    ) -> None:
        self.id = id
        self.flow = flow
        self.algorithm = algorithm
        self.client = client
        self.backend_url = backend_url or client.base_url
        self.poll_interval = poll_interval
        self.min_interval = min_interval
        self.use_sse = use_sse
        self.registry = registry
        self.metrics_limit = metrics_limit
        self.status = "queued"
        self.status_doc: dict[str, Any] = {}
        self.events: list[Event] = []
        self.metrics: list[MetricPoint] = []
        self.last_seq = 0
        self.stream_mode: str | None = None
        self._seqs: set[int] = set()
        self._metric_keys: set[tuple[str, int]] = set()
        self._last_step: dict[str, int] = {}
        self._listeners: list[Callable[[JobUpdate], Any]] = []
        self._queues: list[asyncio.Queue[JobUpdate]] = []
        self._finished = asyncio.Event()
        self._monitor: asyncio.Task[None] | None = None
        self._fatal: BaseException | None = None
        self._status_seen = False

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, flow={self.flow!r}, status={self.status!r}, events={len(self.events)})"

    # -- state ----------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once the job is terminal and its history has been fully fetched."""
        return self._finished.is_set()

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    def add_listener(self, listener: Callable[[JobUpdate], Any]) -> None:
        """Call ``listener(update)`` synchronously for every future update (CLI printer, recorder)."""
        self._listeners.append(listener)

    def ingest_event(self, event: Event) -> bool:
        """Add an event unless its seq was seen; keeps ``events`` sorted by seq."""
        if event.seq in self._seqs:
            return False
        self._seqs.add(event.seq)
        if event.seq > self.last_seq:
            self.last_seq = event.seq
            self.events.append(event)
        else:
            bisect.insort(self.events, event, key=lambda e: e.seq)
        if self._listeners or self._queues:
            self._publish(JobUpdate("event", self.status, event=event))
        return True

    def ingest_metric(self, point: MetricPoint) -> bool:
        """Add a metric point unless (name, step) was seen; keeps ``metrics`` sorted by (step, name)."""
        key = (point.name, point.step)
        if key in self._metric_keys:
            return False
        self._metric_keys.add(key)
        if point.step > self._last_step.get(point.name, -1):
            self._last_step[point.name] = point.step
        if not self.metrics or (self.metrics[-1].step, self.metrics[-1].name) <= (point.step, point.name):
            self.metrics.append(point)
        else:
            bisect.insort(self.metrics, point, key=lambda m: (m.step, m.name))
        if self._listeners or self._queues:
            self._publish(JobUpdate("metric", self.status, metric=point))
        return True

    def ingest_status(self, doc: dict[str, Any]) -> bool:
        """Record a status document; True when the normalised status changed."""
        self.status_doc = doc
        status = normalize_status(doc.get("status") or doc.get("state"))
        if status == self.status and self._status_seen:
            return False
        self._status_seen = True
        self.status = status
        self._publish(JobUpdate("status", status))
        return True

    def metric_series(self, name: str) -> list[tuple[int, float]]:
        return sorted((m.step, m.value) for m in self.metrics if m.name == name)

    def events_df(self) -> Any:
        return _dataframe([e.model_dump() for e in self.events], ["seq", "type", "level", "message", "data",
                                                                  "created_at"])

    def metrics_df(self) -> Any:
        return _dataframe([m.model_dump() for m in self.metrics], ["name", "step", "value", "epoch", "data",
                                                                   "created_at"])

    def export_summary(self, folder: str | Path = ".") -> Path:
        """Prompt learning: write ``summary.md`` and its curve PNG into ``folder``; returns the Markdown path."""
        if self.flow != "prompt_learning":
            raise ConfigError(f"job {self.id} is a {self.flow} job; only prompt-learning jobs have a summary")
        from synth_nb.summary.prompt_learning import SUMMARY_NAME, render_summary

        render_summary(self.status_doc, self.events, self.metrics, job_id=self.id, out_dir=Path(folder))
        return Path(folder) / SUMMARY_NAME

    def raise_for_status(self) -> None:
        """Raise ``JobFailedError`` / ``JobCancelledError`` for a job that ended badly."""
        if self.status in ("failed", "error"):
            reason = self.status_doc.get("error") or self._last_error_message()
            raise JobFailedError(
                f"job {self.id} {self.status}" + (f": {reason}" if reason else ""), job_id=self.id, status=self.status
            )
        if self.status == "cancelled":
            raise JobCancelledError(f"job {self.id} was cancelled", job_id=self.id, status=self.status)

    # -- following ------------------------------------------------------------------------------

    def start_monitoring(self) -> asyncio.Task[None] | None:
        """Follow the job in a background task on the running loop (idempotent)."""
        if self._monitor is None and not self.done:
            self._monitor = asyncio.get_running_loop().create_task(self._run_monitor(), name=f"synth-nb:{self.id}")
        return self._monitor

    async def wait(self, timeout: float | None = None) -> str:
        """Follow until terminal and fully drained; ``JobTimeoutError`` after ``timeout`` seconds."""
        self.start_monitoring()
        try:
            await asyncio.wait_for(self._finished.wait(), timeout)
        except TimeoutError:
            raise JobTimeoutError(
                f"job {self.id} is still {self.status} after {timeout:g}s; it keeps running on the backend "
                f"(re-attach with: synth-nb attach {self.id})", job_id=self.id, status=self.status,
            ) from None
        if self._fatal is not None:
            raise self._fatal
        return self.status

    async def stop_monitoring(self) -> None:
        task, self._monitor = self._monitor, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def cancel(self, timeout: float = 30.0) -> str:
        """Send the cancel request, then follow the job until the backend confirms a terminal state."""
        if self.done:
            return self.status
        try:
            doc = await self.client.cancel(self.flow, self.id)
        except NotFoundError as exc:
            raise NotFoundError(
                f"cannot cancel job {self.id}: this backend has no cancel endpoint for {self.flow} jobs "
                f"(the hosted backend of synth-ai 0.2.24 has none for prompt learning); the job keeps running",
                status_code=exc.status_code, method=exc.method, url=exc.url, body=exc.body,
            ) from None
        if doc.get("status"):
            self.ingest_status(doc)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.terminal and loop.time() < deadline:
            with contextlib.suppress(*TRANSIENT_ERRORS):
                self.ingest_status(await self.client.get_status(self.flow, self.id))
            if not self.terminal:
                await asyncio.sleep(0.2)
        if self.terminal:
            if self._monitor is not None and not self._monitor.done():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._finished.wait(), max(1.0, deadline - loop.time()))
            if not self.done:
                await self.stop_monitoring()
                await self.refresh()
        return self.status

    async def refresh(self) -> None:
        """One full sync: status, every event after the cursor, every metric (used by attach)."""
        self.ingest_status(await self.client.get_status(self.flow, self.id))
        stream = self._make_stream()
        await stream.drain(self.ingest_event)
        await self._backfill_metrics()
        if self.terminal:
            await stream.drain(self.ingest_event)
            self._finish()

    async def updates(self) -> AsyncIterator[JobUpdate]:
        """History first (status, events, metrics), then live updates until ``done``."""
        queue: asyncio.Queue[JobUpdate] = asyncio.Queue()
        history = [JobUpdate("status", self.status)]
        history += [JobUpdate("event", self.status, event=e) for e in self.events]
        history += [JobUpdate("metric", self.status, metric=m) for m in self.metrics]
        finished = self.done
        if not finished:
            self._queues.append(queue)
            with contextlib.suppress(RuntimeError):
                self.start_monitoring()
        try:
            for update in history:
                yield update
            if finished:
                yield JobUpdate("done", self.status)
                return
            while True:
                update = await queue.get()
                yield update
                if update.kind == "done":
                    return
        finally:
            if queue in self._queues:
                self._queues.remove(queue)

    # -- internals ------------------------------------------------------------------------------

    def _publish(self, update: JobUpdate) -> None:
        for listener in self._listeners:
            listener(update)
        for queue in self._queues:
            queue.put_nowait(update)

    def _finish(self) -> None:
        if self._finished.is_set():
            return
        self._finished.set()
        if self.registry is not None:
            with contextlib.suppress(OSError, SynthNbError):
                self.registry.update(self.id, last_seq=self.last_seq, status=self.status)
        self._publish(JobUpdate("done", self.status))

    def _last_error_message(self) -> str:
        for event in reversed(self.events):
            if event.level == "error" or event.type.endswith(".failed"):
                detail = event.data.get("detail") or event.data.get("error") or event.message
                return str(detail)
        return ""

    def _make_stream(self) -> EventStream:
        return EventStream(
            self.client, self.flow, self.id, since_seq=self.last_seq, poll_interval=self.poll_interval,
            min_interval=self.min_interval, use_sse=self.use_sse, until_terminal=False, on_frame=self._on_frame,
        )

    def _on_frame(self, kind: str, payload: dict[str, Any]) -> None:
        from synth_nb.client._parse import parse_metrics

        if kind == "status":
            self.ingest_status(payload)
        elif kind in ("metric", "metrics"):
            for point in parse_metrics(payload.get("points") or [payload]):
                self.ingest_metric(point)

    async def _follow_events(self, stream: EventStream) -> None:
        backoff = self.min_interval
        while True:
            try:
                await stream.run(self.ingest_event)
                self.stream_mode = stream.mode
                return
            except TRANSIENT_ERRORS:
                stream.last_seq = self.last_seq
                backoff = min(self.poll_interval, backoff * 2)
                await asyncio.sleep(backoff)

    async def _sync_metrics(self) -> bool:
        """Read the newest points; if none of them were known, page back from the oldest name cursor."""
        points = await self.client.get_metrics(self.flow, self.id, limit=self.metrics_limit)
        had_any = bool(self.metrics)
        fresh = sum(self.ingest_metric(p) for p in points)
        if len(points) >= self.metrics_limit and fresh == len(points):
            start = min(self._last_step.values()) - 1 if had_any and self._last_step else -1
            await self._backfill_metrics(start)  # the newest page may not reach back to what we have
        return fresh > 0

    async def _backfill_metrics(self, cursor: int = -1) -> None:
        """Page through every point with ``step > cursor`` (``after_step`` ascending)."""
        while True:
            page = await self.client.get_metrics(self.flow, self.id, after_step=cursor, limit=BACKFILL_PAGE)
            for point in page:
                self.ingest_metric(point)
            if not page:  # only an empty page ends it: a backend may cap ``limit``
                return
            top = max(p.step for p in page)
            cursor = top - 1 if top - 1 > cursor else top  # re-read the boundary step: names may share it

    async def _run_monitor(self) -> None:
        stream = self._make_stream()
        self.stream_mode = stream.mode
        events_task = asyncio.ensure_future(self._follow_events(stream))
        interval = self.min_interval
        try:
            while not self.terminal:
                seen = len(self.events)
                changed = False
                try:
                    changed = self.ingest_status(await self.client.get_status(self.flow, self.id))
                    changed = await self._sync_metrics() or changed
                except TRANSIENT_ERRORS:
                    interval = min(self.poll_interval, interval * 2)
                self.stream_mode = stream.mode
                if self.terminal:
                    break
                active = changed or len(self.events) != seen
                interval = 4 * self.min_interval if active else min(self.poll_interval, interval * 1.5)
                if events_task.done():  # the stream saw the end (or failed): only the status is left to poll
                    error = events_task.exception()
                    if error is not None:
                        raise error
                    await asyncio.sleep(interval)
                else:
                    await asyncio.wait({events_task}, timeout=interval)
            events_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await events_task
            await self._final_sync(stream)
        except asyncio.CancelledError:
            events_task.cancel()
            raise
        except Exception as exc:  # AuthError, NotFoundError...: stop following, surface in wait()
            events_task.cancel()
            self._fatal = exc
        self._finish()

    async def _final_sync(self, stream: EventStream) -> None:
        """After a terminal status: fetch every remaining event and metric, riding out transient errors."""
        attempts = 20
        for attempt in range(attempts):
            try:
                stream.last_seq = self.last_seq
                await stream.drain(self.ingest_event)
                await self._backfill_metrics()
                return
            except TRANSIENT_ERRORS:
                if attempt == attempts - 1:
                    raise  # surfaces in wait(): the history may be incomplete, so do not pretend otherwise
                await asyncio.sleep(min(self.poll_interval, self.min_interval * 2**attempt))


def _dataframe(rows: list[dict[str, Any]], columns: list[str]) -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise SynthNbError("DataFrames need pandas: pip install pandas (or use job.events / job.metrics)") from None
    return pd.DataFrame(rows, columns=columns if not rows else None)
