"""Block a cell until several watched jobs end: Ctrl-C cancels the unfinished ones, timeouts come together.

Used by ``panel.show_jobs(..., wait=True)``; it knows a panel only as something that is ``done`` or can
be asked to cancel, so it imports no panel.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Sequence
from typing import Protocol

from synth_nb.errors import JobTimeoutError

__all__ = ["CANCEL_CONFIRM_TIMEOUT", "Cancellable", "block_on", "running_loop"]

CANCEL_CONFIRM_TIMEOUT = 30.0


class Cancellable(Protocol):
    @property
    def done(self) -> bool: ...

    def request_cancel(self) -> concurrent.futures.Future[str]: ...


def running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def block_on(panels: Sequence[Cancellable], futures: Sequence[concurrent.futures.Future[str]], *,
             cancel_on_interrupt: bool = True) -> None:
    """Wait for every panel's watch; Ctrl-C cancels the unfinished jobs (``cancel_on_interrupt=False``: only
    stops watching them); timeouts are raised together."""
    timed_out: list[JobTimeoutError] = []
    try:
        for future in futures:
            try:
                future.result()
            except JobTimeoutError as exc:
                timed_out.append(exc)
    except KeyboardInterrupt:
        if not cancel_on_interrupt:
            for future in futures:
                future.cancel()
            raise
        for panel in panels:
            if not panel.done:
                with contextlib.suppress(Exception):
                    panel.request_cancel().result(CANCEL_CONFIRM_TIMEOUT)
        raise
    if len(timed_out) == 1:
        raise timed_out[0]
    if timed_out:
        raise JobTimeoutError("; ".join(str(exc) for exc in timed_out), job_id=timed_out[0].job_id,
                              status=timed_out[0].status)
