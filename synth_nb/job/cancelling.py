"""Cancel a job: send the request (again after a transient failure, while the caller's time lasts), then read
its status until the backend says it ended.

``cancel_by_id`` is what ``synth-nb cancel`` needs: the job found by one status read, the cancel sent at
once and confirmed by status reads, never its event history (a long job has 100k+ events, and reading
them first would keep the cancel from the backend for seconds). ``cancel_by_id_blocking`` is the same sequence
over the blocking ``PlainClient`` (the command then imports no httpx or asyncio: ``benchmarks/cli_start.py``).
``Job.cancel`` sends and confirms the same way for a job already followed.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from synth_nb.errors import TRANSIENT_ERRORS, NotFoundError
from synth_nb.job._find import find_job, find_job_blocking
from synth_nb.statuses import TERMINAL_STATUSES, normalize_status

if TYPE_CHECKING:
    from synth_nb.client import AsyncSynthClient, PlainClient
    from synth_nb.contract import FlowEndpoints

__all__ = ["CANCEL_POLL", "cancel_by_id", "cancel_by_id_blocking", "send_cancel", "until_terminal"]

#: pause between status checks while a cancel is being confirmed
CANCEL_POLL = 0.2


async def send_cancel(client: AsyncSynthClient, endpoints: FlowEndpoints, job_id: str, flow: str,
                      deadline: float) -> dict[str, Any]:
    """The cancel request's answer, sent again after a transient failure until ``deadline`` (loop time).

    The client's own retries give up after a few attempts; a cancel is safe to repeat, and giving up
    while the caller still allows time would leave the job running.
    """
    # asyncio is imported where a loop runs (so it is loaded already): the blocking sequence below, which
    # ``synth-nb cancel`` runs, does not pay for it (``benchmarks/cli_start.py``)
    import asyncio

    loop = asyncio.get_running_loop()
    while True:
        try:
            return await client.cancel(endpoints, job_id)
        except NotFoundError as exc:
            raise _no_cancel_endpoint(exc, job_id, flow) from None
        except TRANSIENT_ERRORS:
            if loop.time() + CANCEL_POLL >= deadline:
                raise
        await asyncio.sleep(CANCEL_POLL)


async def until_terminal(status: str, read: Callable[[], Awaitable[str]], deadline: float) -> str:
    """Read the status (``read``) every ``CANCEL_POLL`` s until it is terminal or ``deadline`` (loop time)
    passes; transient failures are read again. The last status known."""
    import asyncio  # why here: see ``send_cancel``

    loop = asyncio.get_running_loop()
    while status not in TERMINAL_STATUSES and loop.time() < deadline:
        with contextlib.suppress(*TRANSIENT_ERRORS):
            status = await read()
        if status not in TERMINAL_STATUSES:
            await asyncio.sleep(CANCEL_POLL)
    return status


def _no_cancel_endpoint(exc: NotFoundError, job_id: str, flow: str) -> NotFoundError:
    return NotFoundError(
        f"cannot cancel job {job_id}: this backend has no cancel endpoint for {flow} jobs "
        f"(the hosted backend of synth-ai 0.2.24 has none for prompt learning); the job keeps running",
        status_code=exc.status_code, method=exc.method, url=exc.url, body=exc.body,
    )


def _status_of(doc: Mapping[str, Any]) -> str:
    return normalize_status(doc.get("status") or doc.get("state"))


async def cancel_by_id(job_id: str, client: AsyncSynthClient, flows: Mapping[str, FlowEndpoints], *,
                       kind_of: Callable[[dict[str, Any]], str | None] | None = None, first: str | None = None,
                       timeout: float = 30.0) -> str:
    """Cancel ``job_id`` and wait, within ``timeout`` s, for the backend to confirm: its status then.

    The job is found by one status read per flow tried (``flows`` in order, ``first`` before the others, as
    ``attach`` finds it); a job that already ended is left as it is (nothing is sent).
    """
    flow, doc = await find_job(job_id, client, flows, kind_of=kind_of, first=first)
    status = _status_of(doc)
    if status in TERMINAL_STATUSES:
        return status
    import asyncio  # why here: see ``send_cancel``

    endpoints = flows[flow]
    deadline = asyncio.get_running_loop().time() + timeout
    answer = await send_cancel(client, endpoints, job_id, flow, deadline)
    if answer.get("status") or answer.get("state"):
        status = _status_of(answer)

    async def read() -> str:
        return _status_of(await client.get_status(endpoints, job_id))

    return await until_terminal(status, read, deadline)


def cancel_by_id_blocking(job_id: str, client: PlainClient, flows: Mapping[str, FlowEndpoints], *,
                          kind_of: Callable[[dict[str, Any]], str | None] | None = None, first: str | None = None,
                          timeout: float = 30.0) -> str:
    """``cancel_by_id`` over the blocking client: the same requests in the same order, the same pauses, errors
    and deadline (on ``time.monotonic``, the clock of asyncio's own loop)."""
    flow, doc = find_job_blocking(job_id, client, flows, kind_of=kind_of, first=first)
    status = _status_of(doc)
    if status in TERMINAL_STATUSES:
        return status
    endpoints = flows[flow]
    deadline = time.monotonic() + timeout
    while True:  # sent again after a transient failure while the caller's time lasts (``send_cancel``)
        try:
            answer = client.cancel(endpoints, job_id)
            break
        except NotFoundError as exc:
            raise _no_cancel_endpoint(exc, job_id, flow) from None
        except TRANSIENT_ERRORS:
            if time.monotonic() + CANCEL_POLL >= deadline:
                raise
        time.sleep(CANCEL_POLL)
    if answer.get("status") or answer.get("state"):
        status = _status_of(answer)
    while status not in TERMINAL_STATUSES and time.monotonic() < deadline:  # read until it ended (``until_terminal``)
        with contextlib.suppress(*TRANSIENT_ERRORS):
            status = _status_of(client.get_status(endpoints, job_id))
        if status not in TERMINAL_STATUSES:
            time.sleep(CANCEL_POLL)
    return status
