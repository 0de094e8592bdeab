"""What is known about one job: status, events and metrics, each deduplicated and kept in order.

Events are deduplicated by seq and metrics by (name, step), so reconnects, retries and overlapping polls
can never show the same thing twice. They are held as compact columns (``EventLog``, ``MetricLog``), so a
kernel can hold a million of them. Every change is published as a ``JobUpdate`` to listeners (called
synchronously) and to ``updates()`` queues, which may live on any event loop.
"""

from __future__ import annotations

import asyncio
import functools
import json
import operator
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from synth_nb.client import EventRecord, MetricPage, MetricRecord
from synth_nb.errors import JobCancelledError, JobFailedError, SynthNbError
from synth_nb.job.logs import EventLog, MetricLog
from synth_nb.job.samples import index_samples
from synth_nb.records import METRIC_ALIASES, TERMINAL_STATUSES, Event, MetricPoint, normalize_status

__all__ = ["DoneSignal", "JobHistory", "JobUpdate", "UpdateKind", "call_on_loop", "running_loop"]

UpdateKind = Literal["status", "event", "metric", "phase", "linked", "done"]


@dataclass(frozen=True)
class JobUpdate:
    """One change to a job, in the order it was observed."""

    kind: UpdateKind
    status: str
    event: Event | None = None
    metric: MetricPoint | None = None
    #: a timeline entry ("phase"), or the linked job's status document ("linked")
    entry: dict[str, Any] | None = None


def running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def call_on_loop(loop: asyncio.AbstractEventLoop, callback: Callable[[], Any]) -> None:
    """Run ``callback`` on ``loop``: now when it is the running loop, else thread-safely (a closed loop's
    work is already over)."""
    if loop is running_loop():
        callback()
    elif not loop.is_closed():
        loop.call_soon_threadsafe(callback)


class DoneSignal:
    """A one-shot flag any event loop can wait for: one ``asyncio.Event`` per waiting loop, made on demand.

    An ``asyncio.Event`` belongs to the loop that first waits on it, so a job that moves between loops
    (a notebook's background loop, then the kernel's) cannot keep one from its constructor.
    """

    def __init__(self) -> None:
        self._set = False
        self._events: dict[asyncio.AbstractEventLoop, asyncio.Event] = {}
        self._lock = threading.Lock()

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        with self._lock:
            if self._set:
                return
            self._set = True
            waiting, self._events = self._events, {}
        for loop, event in waiting.items():
            call_on_loop(loop, event.set)

    def clear(self) -> None:
        with self._lock:
            self._set = False

    async def wait(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._set:
                return
            for old in [other for other in self._events if other.is_closed()]:
                del self._events[old]
            event = self._events.setdefault(loop, asyncio.Event())
        await event.wait()


def _canonical(record: MetricRecord) -> MetricRecord:
    """``record`` under the name it is kept by (``METRIC_ALIASES``: a later backend's name for the same series)."""
    name = METRIC_ALIASES.get(record.name)
    if name is None:
        return record
    document = json.loads(record.document)
    document["name"] = name
    return MetricRecord(name, record.step, record.value, json.dumps(document, separators=(",", ":")).encode())


class JobHistory:
    """A job's identity and everything observed about it; ``Job`` adds the backend connection."""

    def __init__(self, id: str, flow: str, *, algorithm: str | None = None) -> None:
        self.id = id
        self.flow = flow
        self.algorithm = algorithm
        self.status = "queued"
        self.status_doc: dict[str, Any] = {}
        #: every event, in seq order (a read-only sequence of ``Event``)
        self.events = EventLog()
        index_samples(self.events, flow)
        #: every metric point, in (step, name) order (a read-only sequence of ``MetricPoint``)
        self.metrics = MetricLog()
        #: metric points the backend sent that could not be read (no name, a value that is not a number):
        #: each ``{"raw": the point as sent, "reason": why}``, kept once however often it is sent again
        self.unreadable_metrics: list[dict[str, Any]] = []
        self._unreadable_seen: set[str] = set()
        #: the job's phases from the backend's timeline (``{"phase", "created_at", "message"?}``), in the
        #: order received; an entry that is not an object is kept as ``{"raw": entry}``
        self.timeline: list[dict[str, Any]] = []
        self._timeline_seen: set[str] = set()
        self._listeners: list[Callable[[JobUpdate], Any]] = []
        self._queues: list[tuple[asyncio.AbstractEventLoop, asyncio.Queue[JobUpdate]]] = []
        self._status_seen = False

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def last_seq(self) -> int:
        """The highest event seq seen (the cursor for resuming the event stream)."""
        return self.events.last_seq

    @property
    def last_steps(self) -> Mapping[str, int]:
        """The highest step seen per metric name (the cursor for paging metric history)."""
        return self.metrics.last_steps

    def add_listener(self, listener: Callable[[JobUpdate], Any]) -> None:
        """Call ``listener(update)`` synchronously for every future update (CLI printer, recorder)."""
        self._listeners.append(listener)

    def ingest_event(self, event: Event | EventRecord) -> bool:
        """Add an event unless its seq was seen; keeps ``events`` sorted by seq."""
        record = event if isinstance(event, EventRecord) else EventRecord.of(event)
        if not self.events.add(record):
            return False
        if self._listeners or self._queues:
            model = event if isinstance(event, Event) else record.to_event()
            self._publish(JobUpdate("event", self.status, event=model))
        return True

    def ingest_metric(self, point: MetricPoint | MetricRecord) -> bool:
        """Add a metric point unless (name, step) was seen; keeps ``metrics`` sorted by (step, name)."""
        record = _canonical(point if isinstance(point, MetricRecord) else MetricRecord.of(point))
        if not self.metrics.add(record):
            return False
        if self._listeners or self._queues:
            model = point if isinstance(point, MetricPoint) and point.name == record.name else record.to_point()
            self._publish(JobUpdate("metric", self.status, metric=model))
        return True

    def ingest_events(self, records: Sequence[EventRecord]) -> int:
        """Add a page of event records (each seq once, as ``ingest_event``); returns how many were new."""
        kept = self.events.extend(records)
        if kept and (self._listeners or self._queues):
            self._publish_page([JobUpdate("event", self.status, event=record.to_event()) for record in kept])
        return len(kept)

    def ingest_metrics(self, records: Sequence[MetricRecord]) -> int:
        """Add a page of metric records (each (name, step) once, as ``ingest_metric``); returns how many
        were new. A ``MetricPage``'s unreadable points are kept too (``ingest_unreadable_metrics``)."""
        if isinstance(records, MetricPage) and records.unreadable:
            self.ingest_unreadable_metrics(records.unreadable)
        aliased = not METRIC_ALIASES.keys().isdisjoint(map(operator.attrgetter("name"), records))  # in C: a long page
        folded = [_canonical(r) for r in records] if aliased else None
        known = 0 if folded is None else sum(self.metrics.holds(r.name, r.step) for r in folded)
        kept = self.metrics.extend(records if folded is None else folded)
        if kept and (self._listeners or self._queues):
            self._publish_page([JobUpdate("metric", self.status, metric=record.to_point()) for record in kept])
        # a later name's twin of a point new on this page is new too (the caller pages back when all are new)
        return len(kept) if folded is None else len(records) - known

    def ingest_unreadable_metrics(self, items: Sequence[dict[str, Any]]) -> int:
        """Keep metric points that could not be read (``{"raw", "reason"}``), each once; returns how many
        were new. A backend that ignores ``after_step`` sends them again on every poll."""
        new = 0
        for item in items:
            key = json.dumps(item.get("raw"), sort_keys=True, default=str)
            if key not in self._unreadable_seen:
                self._unreadable_seen.add(key)
                self.unreadable_metrics.append(item)
                new += 1
        return new

    def ingest_timeline(self, entries: Sequence[Any]) -> int:
        """Add timeline entries not seen before (the whole timeline comes on every read); returns how many
        were new."""
        new = 0
        for entry in entries:
            entry = entry if isinstance(entry, dict) else {"raw": entry}
            key = json.dumps(entry, sort_keys=True, default=str)
            if key in self._timeline_seen:
                continue
            self._timeline_seen.add(key)
            self.timeline.append(entry)
            self._publish(JobUpdate("phase", self.status, entry=entry))
            new += 1
        return new

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
        """``(step, value)`` pairs of one metric, in step order (``metrics.series`` gives numpy arrays)."""
        steps, values = self.metrics.series(name)
        return list(zip(steps.tolist(), values.tolist(), strict=True))

    def events_df(self) -> Any:
        """One row per event: seq, type, level, message, data, created_at (built from the columns)."""
        _require_pandas()
        return self.events.to_frame()

    def metrics_df(self) -> Any:
        """One row per metric point: name, step, value, epoch, data, created_at."""
        _require_pandas()
        return self.metrics.to_frame()

    def raise_for_status(self) -> None:
        """Raise ``JobFailedError`` / ``JobCancelledError`` for a job that ended badly."""
        if self.status in ("failed", "error"):
            reason = self.status_doc.get("error") or self._last_error_message()
            raise JobFailedError(
                f"job {self.id} {self.status}" + (f": {reason}" if reason else ""), job_id=self.id, status=self.status
            )
        if self.status == "cancelled":
            raise JobCancelledError(f"job {self.id} was cancelled", job_id=self.id, status=self.status)

    def history_updates(self) -> Iterator[JobUpdate]:
        """Everything known now, as the updates a late consumer would have seen.

        What is known is fixed when this is called; the models are built one at a time as the iterator
        is consumed, so replaying a long history holds no more than one of them.
        """
        return _replay(self.status, list(self.timeline), self.events, self.events.snapshot(), self.metrics,
                       self.metrics.snapshot())

    def _subscribe(self) -> asyncio.Queue[JobUpdate]:
        queue: asyncio.Queue[JobUpdate] = asyncio.Queue()
        self._queues.append((asyncio.get_running_loop(), queue))
        return queue

    def _unsubscribe(self, queue: asyncio.Queue[JobUpdate]) -> None:
        self._queues = [(loop, q) for loop, q in self._queues if q is not queue]

    def _publish(self, update: JobUpdate) -> None:
        for listener in self._listeners:
            listener(update)
        for loop, queue in self._queues:
            call_on_loop(loop, functools.partial(queue.put_nowait, update))

    def _publish_page(self, updates: list[JobUpdate]) -> None:
        """A page's updates, in order: each to every listener, and to each queue in one hand-over to its loop
        (one call per page, not per point: at 100 points/s the hand-overs were a sixth of a panel's CPU)."""
        for listener in self._listeners:
            for update in updates:
                listener(update)
        for loop, queue in self._queues:
            call_on_loop(loop, functools.partial(_put_all, queue, updates))

    def _last_error_message(self) -> str:
        event = self.events.last_error()
        if event is None:
            return ""
        return str(event.data.get("detail") or event.data.get("error") or event.message)


def _put_all(queue: asyncio.Queue[JobUpdate], updates: list[JobUpdate]) -> None:
    for update in updates:
        queue.put_nowait(update)


def _replay(status: str, timeline: list[dict[str, Any]], events: EventLog, event_rows: Sequence[int],
            metrics: MetricLog, metric_rows: Sequence[int]) -> Iterator[JobUpdate]:
    yield JobUpdate("status", status)
    for entry in timeline:
        yield JobUpdate("phase", status, entry=entry)
    for event in events.models(event_rows):
        yield JobUpdate("event", status, event=event)
    for point in metrics.models(metric_rows):
        yield JobUpdate("metric", status, metric=point)


def _require_pandas() -> None:
    try:
        import pandas  # noqa: F401
    except ImportError:
        raise SynthNbError("DataFrames need pandas: pip install pandas (or use job.events / job.metrics)") from None
