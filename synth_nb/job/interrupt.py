"""What an interrupt (Ctrl-C, a cancelled task) does to a job being submitted or followed: cancel it, quickly.

An interrupt must end the command within a few seconds whatever the load, and leave no job running that
nobody watches. Both cannot always hold (a backend that does not answer cannot be told to cancel), so the
time wins: every step here has a deadline of ``INTERRUPT_GRACE`` seconds and says when it could not
confirm the cancel. A second interrupt cancels these waits too.

A job-creation request that was already sent when the interrupt came is the delicate case: it may have
created the job, and only its answer says which one. ``create_through_interrupt`` lets that request finish
(within the grace) so its job can be cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from synth_nb.errors import SynthNbError
from synth_nb.records import normalize_status

if TYPE_CHECKING:
    from synth_nb.client import AsyncSynthClient
    from synth_nb.contract import FlowEndpoints
    from synth_nb.job._job import Job

__all__ = ["INTERRUPT_GRACE", "cancel_after_interrupt", "cancel_job_after_interrupt", "create_through_interrupt"]

#: the most an interrupt waits for one thing (the create answer, a cancel) before giving up on it
INTERRUPT_GRACE = 5.0
#: what a cancel that could not be confirmed in time reports
UNCONFIRMED = "cancel not confirmed"


def job_id_of(body: Any) -> str | None:
    """The job id in a create answer (``job_id`` or ``id``)."""
    if isinstance(body, dict):
        value = body.get("job_id") or body.get("id")
        return str(value) if value else None
    return None


async def create_through_interrupt(request: Awaitable[Any], created: list[str]) -> Any:
    """Await the create request; when interrupted, still wait up to ``INTERRUPT_GRACE`` for its answer,
    put the id of the job it made in ``created`` and pass the interrupt on."""
    task = asyncio.ensure_future(request)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        done, _ = await asyncio.wait({task}, timeout=INTERRUPT_GRACE)
        if task in done and not task.cancelled() and task.exception() is None:
            job_id = job_id_of(task.result())
            if job_id:
                created.append(job_id)
        else:
            task.cancel()
        raise


async def cancel_after_interrupt(client: AsyncSynthClient, endpoints: FlowEndpoints, job_id: str) -> str:
    """Ask the backend to cancel ``job_id`` (at most ``INTERRUPT_GRACE``); the status it answered, or
    ``"cancel not confirmed"``."""
    try:
        async with asyncio.timeout(INTERRUPT_GRACE):
            doc = await client.cancel(endpoints, job_id)
    except (SynthNbError, TimeoutError):
        return UNCONFIRMED
    return normalize_status(str(doc.get("status") or "cancelling"))


async def cancel_job_after_interrupt(job: Job) -> str:
    """Cancel a followed job and wait for the backend to confirm, all within ``INTERRUPT_GRACE``: its
    final status, or ``"cancel not confirmed"`` (a cancel request may still have reached the backend)."""
    if job.done:
        return job.status
    with contextlib.suppress(SynthNbError, TimeoutError):
        async with asyncio.timeout(INTERRUPT_GRACE):
            return await job.cancel(timeout=INTERRUPT_GRACE, by="this command (interrupted)")
    return job.status if job.terminal else UNCONFIRMED
