"""``JobView``: what a monitor (the notebook panel, a recorder, a printer) reads from a job and may ask of it.

``Job`` satisfies it; so can a test double, without the panel probing attributes with ``getattr``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from synth_nb.job.history import JobUpdate
from synth_nb.records import Event, MetricPoint

__all__ = ["JobView"]


@runtime_checkable
class JobView(Protocol):
    """A job as a monitor sees it: identity, what is known so far, and how to follow, wait or cancel."""

    @property
    def id(self) -> str: ...
    @property
    def flow(self) -> str: ...
    @property
    def algorithm(self) -> str | None: ...
    @property
    def backend_url(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def status_doc(self) -> Mapping[str, Any]: ...
    @property
    def events(self) -> Sequence[Event]: ...
    @property
    def metrics(self) -> Sequence[MetricPoint]: ...
    @property
    def done(self) -> bool: ...
    @property
    def succeeded(self) -> bool: ...
    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """Where the job's client works: a blocking wait must run there."""

    def add_listener(self, listener: Callable[[JobUpdate], Any]) -> None: ...

    def start_monitoring(self) -> object: ...

    async def stop_monitoring(self) -> None: ...

    def updates(self) -> AsyncIterator[JobUpdate]: ...

    async def wait(self, timeout: float | None = None) -> str: ...

    async def cancel(self) -> str: ...

    async def refresh(self) -> None: ...
