"""``JobView``: what a monitor (the notebook panel, a recorder, a printer) reads from a job and may ask of it.

``Job`` satisfies it; so can a test double, without the panel probing attributes with ``getattr``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from synth_nb.flows.artifacts import FinishedJob
from synth_nb.job.history import JobUpdate

__all__ = ["JobView"]


@runtime_checkable
class JobView(FinishedJob, Protocol):
    """A job as a monitor sees it: what flows read of a finished job (id, flow, status, status document,
    events, metrics), plus how to follow, wait or cancel it."""

    @property
    def algorithm(self) -> str | None: ...
    @property
    def backend_url(self) -> str: ...
    @property
    def results_folder(self) -> Path | None:
        """Where the job's result files go (its config's ``results_folder``), if known."""
    @property
    def unreachable_since(self) -> datetime | None:
        """When the backend stopped answering the job's client (None while it answers)."""
    @property
    def timeline(self) -> Sequence[Mapping[str, Any]]:
        """The job's phases as the backend's timeline sent them, masked (``{"phase", "message"?, ...}``)."""
    @property
    def linked(self) -> JobView | None:
        """The job its status names as ``linked_job_id``, followed alongside (None: none, or not followable)."""
    @property
    def linked_note(self) -> Mapping[str, Any] | None:
        """Which job is linked (``{"job_id", "flow"}``), or why it could not be followed (``{"job_id", "error"}``)."""
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

    async def cancel(self, timeout: float = 30.0, *, by: str = "this command") -> str: ...

    async def refresh(self) -> None: ...
