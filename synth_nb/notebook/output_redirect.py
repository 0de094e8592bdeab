"""Show monitor panels for jobs submitted from the wizard, below the wizard.

A button press is a comm message: by the time the submission has finished, the front end no longer
routes new outputs for it to any cell, and an ``ipywidgets.Output`` used as a context manager only
captures while that message is being handled. So the redirection happens in the kernel: while the
panels are created, and for every later in-place update of their outputs (``display_id``), the
display messages are turned into entries of the Output widget's ``outputs`` trait. The hook is
ipykernel's display-publisher hook, which is per thread; the panels run on the kernel loop's thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from synth_nb.job import JobView
    from synth_nb.notebook.panel import MonitorPanel

__all__ = ["OutputRedirect", "show_jobs_in"]


class OutputRedirect:
    """A display-publisher hook that writes display messages into an ``ipywidgets.Output``."""

    def __init__(self, output: Any) -> None:
        self.output = output
        self.capturing = False
        #: display id (or None) of each entry of ``output.outputs`` that this hook added, in order
        self._ids: list[str | None] = []

    def __call__(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        kind = msg.get("header", {}).get("msg_type")
        content = msg.get("content", {})
        display_id = (content.get("transient") or {}).get("display_id")
        entry = {"output_type": "display_data", "data": content.get("data", {}),
                 "metadata": content.get("metadata", {})}
        if kind == "display_data" and self.capturing:
            self._ids.append(display_id)
            self.output.outputs = (*self.output.outputs, entry)
            return None
        if kind == "update_display_data" and display_id is not None and display_id in self._ids:
            outputs = list(self.output.outputs)
            index = self._ids.index(display_id)
            if index < len(outputs):
                outputs[index] = entry
                self.output.outputs = tuple(outputs)
            return None
        return msg


def _display_pub() -> Any:
    from IPython import get_ipython

    shell = get_ipython()
    pub = getattr(shell, "display_pub", None)
    return pub if hasattr(pub, "register_hook") else None


def show_jobs_in(output: Any, jobs: Sequence[JobView], show: Callable[..., Any] | None = None) -> list[Any]:
    """Open one monitor panel per job inside ``output`` (plain display where that is impossible).

    Call on the kernel loop's thread. Returns the panels.
    """
    if show is None:
        from synth_nb.notebook.panel import show_job

        show = show_job
    pub = _display_pub()
    if output is None or pub is None:
        return [show(job, wait=False) for job in jobs]
    redirect = OutputRedirect(output)
    pub.register_hook(redirect)
    redirect.capturing = True
    try:
        panels = [show(job, wait=False) for job in jobs]
    finally:
        redirect.capturing = False
    _unhook_when_done(pub, redirect, panels)
    return panels


def _unhook_when_done(pub: Any, redirect: OutputRedirect, panels: list[MonitorPanel]) -> None:
    """Remove the hook once every panel has drawn its final state (on the thread that added it)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop (plain Python): nothing will update the panels later anyway
        pub.unregister_hook(redirect)
        return

    async def later() -> None:
        await asyncio.gather(*(panel.finished() for panel in panels), return_exceptions=True)
        pub.unregister_hook(redirect)

    loop.create_task(later())
