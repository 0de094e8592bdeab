"""Widget outputs that leave static HTML behind once they are over (a job ended, the kernel shut down).

A saved notebook keeps a widget's output as a reference to a model that only its kernel holds, so a
notebook reopened without that kernel (or rendered by nbviewer) shows "Error displaying widget: model not
found" where the wizard or a panel's buttons were. Each such widget is shown as an output with a display
id of its own (``LiveOutput``); when it is over, the output is replaced in place by a snapshot (static HTML
with a text copy) that says what it last showed, and the notebook saved after that holds no widget.

The kernel's shutdown ends every widget at once: ``install_shutdown_hook`` replaces every live output
before ipykernel handles the ``shutdown_request``. A front end that asked for a *restart* drops what the
old kernel sends from then on, and a crashed kernel sends nothing, so there the widgets' own script does
it (``js/kernel_gone.js``): once the notebook's session reports the kernel restarting or dead, each view
says the kernel is gone and its output is replaced, in the notebook model, by a static copy of what it
shows. That needs JupyterLab's or Notebook 7's widget manager (other front ends only get the words).
Widgets still live when a notebook is saved and its server then stops without a kernel shutdown stay
widget references: they need their kernel, as any ipywidgets output does.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import uuid
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["LiveOutput", "freeze_all", "install_shutdown_hook"]

#: every live output shown in this kernel and not yet replaced by its snapshot
_LIVE: weakref.WeakSet[LiveOutput] = weakref.WeakSet()


class LiveOutput:
    """One widget's outputs, each with a display id of its own; ``freeze()`` replaces them by ``snapshot()``."""

    def __init__(self, snapshot: Callable[[], dict[str, Any]], *, name: str = "widget") -> None:
        self.snapshot = snapshot
        self.name = name
        #: (display id, context of the cell that showed it) of every output not yet replaced
        self._shown: list[tuple[str, contextvars.Context]] = []

    @property
    def frozen(self) -> bool:
        return not self._shown

    def show(self, bundle: dict[str, Any], metadata: dict[str, Any] | None = None) -> None:
        """Display the widget's bundle in the current cell, remembering the cell for the later update."""
        from IPython.display import display

        display_id = f"synth-{self.name}-{uuid.uuid4().hex[:12]}"
        display(bundle, metadata=metadata or {}, raw=True, display_id=display_id)
        self._shown.append((display_id, contextvars.copy_context()))
        _LIVE.add(self)

    def freeze(self) -> None:
        """Replace every output of the widget by its snapshot; nothing happens if none is shown."""
        if not self._shown:
            return
        from IPython.display import update_display

        shown, self._shown = self._shown, []
        _LIVE.discard(self)
        bundle = self.snapshot()
        for display_id, context in shown:  # in the displaying cell's context: front ends apply updates
            context.copy().run(update_display, bundle, raw=True, display_id=display_id)  # sent for its execution


def freeze_all() -> None:
    """Replace every live output of this kernel by its snapshot (the kernel is going away)."""
    for output in list(_LIVE):
        with contextlib.suppress(Exception):  # one snapshot that fails must not keep the others live
            output.freeze()


def install_shutdown_hook(shell: Any) -> None:
    """Freeze every live output when ipykernel receives ``shutdown_request`` (shutdown or restart).

    IPython has no shutdown event and at ``atexit`` the front end may no longer listen, so the kernel's
    own handler is wrapped: the snapshots are sent first, while the connection is certainly open.
    Outside ipykernel (a terminal, a test shell) there is nothing to wrap.
    """
    kernel = getattr(shell, "kernel", None)
    for handlers in (getattr(kernel, "control_handlers", None), getattr(kernel, "shell_handlers", None)):
        if not isinstance(handlers, dict):
            continue
        original = handlers.get("shutdown_request")
        if original is None or getattr(original, "freezes_live_outputs", False):
            continue
        handlers["shutdown_request"] = _freezing(original)


def _freezing(original: Callable[..., Any]) -> Callable[..., Any]:
    async def shutdown_request(stream: Any, ident: Any, parent: Any) -> None:
        freeze_all()
        result = original(stream, ident, parent)
        if inspect.isawaitable(result):
            await result

    shutdown_request.freezes_live_outputs = True  # type: ignore[attr-defined]
    return shutdown_request
