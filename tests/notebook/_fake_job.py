"""A stand-in with the ``synth_nb.job.Job`` surface the panel reads, driven by the test."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from synth_nb.records import TERMINAL_STATUSES, Event, MetricPoint


@dataclass
class Update:
    kind: str
    status: str | None = None
    event: Event | None = None
    metric: MetricPoint | None = None


class FakeJob:
    def __init__(self, flow: str = "sft", job_id: str = "job_test123", algorithm: str | None = None) -> None:
        self.id, self.flow, self.algorithm = job_id, flow, algorithm
        self.status = "running"
        self.events: list[Event] = []
        self.metrics: list[MetricPoint] = []
        self.status_doc: dict[str, Any] = {"id": job_id, "status": "running"}
        self.cancel_calls = 0
        self.monitoring_started = 0
        self._queues: list[asyncio.Queue[Update]] = []
        self._log: list[Update] = []

    # --- Job surface --------------------------------------------------------------------------
    def start_monitoring(self) -> None:
        self.monitoring_started += 1

    async def updates(self) -> AsyncIterator[Update]:
        queue: asyncio.Queue[Update] = asyncio.Queue()
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

    async def cancel(self) -> str:
        self.cancel_calls += 1
        self.finish("cancelled")
        return self.status

    async def wait(self, timeout: float | None = None) -> str:
        while self.status not in TERMINAL_STATUSES:
            await asyncio.sleep(0.01)
        return self.status

    # --- test driving -------------------------------------------------------------------------
    def _push(self, update: Update) -> None:
        self._log.append(update)
        for q in self._queues:
            q.put_nowait(update)

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
