"""A ``synth_nb.job.JobView`` driven by the test: what the monitor panel reads, without a backend."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from synth_nb.job import JobUpdate
from synth_nb.job.history import UpdateKind
from synth_nb.records import TERMINAL_STATUSES, Event, MetricPoint


def Update(kind: UpdateKind, status: str | None = None, event: Event | None = None,
           metric: MetricPoint | None = None) -> JobUpdate:
    return JobUpdate(kind, status or "running", event=event, metric=metric)


class FakeJob:
    def __init__(self, flow: str = "sft", job_id: str = "job_test123", algorithm: str | None = None) -> None:
        self.id, self.flow, self.algorithm = job_id, flow, algorithm
        self.backend_url = "http://127.0.0.1:9/api"
        self.results_folder: Path | None = None
        self.unreachable_since: datetime | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.status = "running"
        self.events: list[Event] = []
        self.metrics: list[MetricPoint] = []
        self.status_doc: dict[str, Any] = {"id": job_id, "status": "running"}
        self.timeline: list[dict[str, Any]] = []
        self.linked: FakeJob | None = None
        self.linked_note: dict[str, Any] | None = None
        self.cancel_calls = 0
        self.monitoring_started = 0
        self.refreshes = 0
        self._queues: list[asyncio.Queue[JobUpdate]] = []
        self._log: list[JobUpdate] = []
        self._listeners: list[Callable[[JobUpdate], Any]] = []

    # --- JobView ------------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"

    def add_listener(self, listener: Callable[[JobUpdate], Any]) -> None:
        self._listeners.append(listener)

    def start_monitoring(self) -> None:
        self.monitoring_started += 1

    async def stop_monitoring(self) -> None:
        return None

    async def refresh(self) -> None:
        self.refreshes += 1

    async def updates(self) -> AsyncIterator[JobUpdate]:
        queue: asyncio.Queue[JobUpdate] = asyncio.Queue()
        history = list(self._log)
        self._queues.append(queue)
        for item in history:
            yield item
            if item.kind == "done":
                return
        while True:
            item = await queue.get()
            yield item
            if item.kind == "done":
                return

    async def cancel(self, timeout: float = 30.0, *, by: str = "this command") -> str:
        self.cancel_calls += 1
        self.cancelled_by = by
        self.finish("cancelled")
        return self.status

    async def wait(self, timeout: float | None = None) -> str:
        while self.status not in TERMINAL_STATUSES:
            await asyncio.sleep(0.01)
        return self.status

    # --- test driving -------------------------------------------------------------------------
    def _push(self, update: JobUpdate) -> None:
        self._log.append(update)
        for q in self._queues:
            q.put_nowait(update)
        for listener in self._listeners:
            listener(update)

    def event(self, type_: str, message: str = "", level: str = "info", **data: Any) -> Event:
        ev = Event(seq=len(self.events) + 1, type=type_, message=message, level=level, data=data)
        self.events.append(ev)
        self._push(Update("event", event=ev))
        return ev

    def metric(self, name: str, step: int, value: float) -> MetricPoint:
        mp = MetricPoint(name=name, step=step, value=value)
        self.metrics.append(mp)
        self._push(Update("metric", metric=mp))
        return mp

    def finish(self, status: str = "succeeded", **doc: Any) -> None:
        self.status = status
        self.status_doc.update(status=status, **doc)
        self._push(Update("status", status=status))
        self._push(Update("done", status=status))

