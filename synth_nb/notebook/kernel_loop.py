"""Hand work from widget callbacks to the kernel's event loop.

With ipykernel 7 a comm message (a button press, a trait change) may be handled on a subshell thread
rather than the thread running the kernel's asyncio loop. Anything that touches the async client or a
``Job`` must run on that loop, so widgets capture it once (``KernelLoop.capture()``) while a cell is
running and hop through it from callbacks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["KernelLoop", "background_loop", "run_sync"]

T = TypeVar("T")


class KernelLoop:
    """The loop a cell ran on, plus thread-safe ways to run work there."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    @classmethod
    def capture(cls) -> KernelLoop:
        """Remember the loop of the calling context (a cell or magic); make one if there is none.

        Outside a kernel (plain Python, tests) there may be no running loop; a private loop in a daemon
        thread keeps the same contract so callers never need to branch.
        """
        try:
            return cls(asyncio.get_running_loop())
        except RuntimeError:
            return cls(background_loop())

    def on_loop_thread(self) -> bool:
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on the loop (now if already there, else scheduled thread-safely)."""
        if self.on_loop_thread():
            fn(*args)
        else:
            self.loop.call_soon_threadsafe(fn, *args)

    def spawn(self, coro: Coroutine[Any, Any, T], context: contextvars.Context | None = None
              ) -> concurrent.futures.Future[T]:
        """Run ``coro`` as a task on the loop from any thread; the returned future is thread-safe.

        ``context`` (a copy is used) decides, among others, which cell the task's outputs belong to.
        """
        if context is None and not self.on_loop_thread():
            return asyncio.run_coroutine_threadsafe(coro, self.loop)
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def start() -> None:
            _chain(self.loop.create_task(coro, context=context.copy() if context is not None else None), future)

        self.call_soon(start)
        return future


def _chain(task: asyncio.Task[T], future: concurrent.futures.Future[T]) -> None:
    def done(t: asyncio.Task[T]) -> None:
        if t.cancelled():
            future.cancel()
        elif t.exception() is not None:
            future.set_exception(t.exception())
        else:
            future.set_result(t.result())

    task.add_done_callback(done)


_BACKGROUND: asyncio.AbstractEventLoop | None = None
_BACKGROUND_LOCK = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """One daemon-thread loop per process, used only when no loop is running (scripts, tests)."""
    global _BACKGROUND
    with _BACKGROUND_LOCK:
        if _BACKGROUND is None or _BACKGROUND.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="synth-nb-loop", daemon=True)
            thread.start()
            _BACKGROUND = loop
        return _BACKGROUND


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` to completion from synchronous code that may sit inside the kernel's running loop.

    A magic cannot await and cannot re-enter the kernel loop, so blocking work (``--wait``, headless
    runs) runs on the process's background loop while the calling thread waits. Ctrl-C / interrupt
    cancels the coroutine (its ``finally`` blocks run) before ``KeyboardInterrupt`` propagates.
    """
    future = asyncio.run_coroutine_threadsafe(coro, background_loop())
    try:
        return future.result(timeout)
    except KeyboardInterrupt:
        future.cancel()
        with contextlib.suppress(BaseException):
            future.result(10)
        raise
