"""Send what a wizard button starts (the monitor panels of submitted jobs) to the wizard's own cell.

A button press reaches the kernel as a comm message, and every output sent while handling it names
that message as its parent. Jupyter front ends attach an output to the cell whose execution is its
parent, so those outputs would be shown nowhere. ipykernel keeps the parent in a context variable, so a
task started in the context captured while the wizard's cell ran (``CellContext``) sends outputs that
belong to that cell: JupyterLab and Notebook 7 append them to it even after it has finished, apply their
``display_id`` updates in place, and save them with the notebook as plain outputs (HTML, PNG, Markdown)
that survive reopening, nbviewer and ``nbconvert``. Widgets among them (Cancel) stay live beside them.

Only what shows output runs there (the submission's printed checks, the panels): the wizard's own trait
changes keep the button press as their parent, like every other change a widget callback makes.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["CellContext"]

T = TypeVar("T")
P = ParamSpec("P")


class CellContext:
    """The output context of the cell that displayed a widget; empty until ``capture()`` is called."""

    def __init__(self) -> None:
        self._context: contextvars.Context | None = None

    @property
    def captured(self) -> bool:
        return self._context is not None

    def capture(self) -> None:
        """Remember the calling cell (call while it runs, e.g. from ``_ipython_display_``); the latest wins."""
        self._context = contextvars.copy_context()

    def create_task(self, loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``coro`` as a task on ``loop`` (from that loop's thread) with the cell as its output parent.

        Without a captured cell the task runs in the caller's context. Each task gets its own copy of the
        context, so several may run at once.
        """
        if self._context is None:
            return loop.create_task(coro)
        return loop.create_task(coro, context=self._context.copy())

    def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Call ``fn`` with the cell as the output parent (in the caller's context if none was captured)."""
        if self._context is None:
            return fn(*args, **kwargs)
        return self._context.copy().run(fn, *args, **kwargs)
