"""The monitor panel's button row as one output: live ipywidgets while something in it can be pressed, then
static text of its last state, so a notebook saved after that and reopened without its kernel shows no
"Error displaying widget".

The row becomes text when its job ends (at once, or, when it holds the keyboard focus, once the focus has
left it: replacing it would drop the focus to the page) and when the kernel shuts down
(``live_output.freeze_all``); the panel says what its first line is then.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from synth_nb.notebook.controls import PanelControls
from synth_nb.notebook.live_output import LiveOutput

__all__ = ["PanelRow"]


class PanelRow:
    """``controls`` (None until shown, or where ipywidgets cannot load) inside an output that ``end`` freezes.

    ``head`` gives the first line of the static text (the job's state), asked when the row becomes text;
    ``ended``: the job has ended, so the text is that one line and what was written, no button states.
    """

    def __init__(self, job_id: str, head: Callable[[], str], ended: Callable[[], bool] = lambda: False) -> None:
        self.job_id = job_id
        self._head = head
        self._ended = ended
        self.controls: PanelControls | None = None
        self.output = LiveOutput(self.snapshot, name=f"{job_id}-controls")

    def show(self, *, on_cancel: Callable[[], object], on_show_all: Callable[[bool], None],
             show_all: bool) -> None:
        """Make the buttons and display them in the current output context."""
        try:
            self.controls = PanelControls(on_cancel=on_cancel, on_show_all=on_show_all, show_all=show_all,
                                          job_id=self.job_id, kernel_gone_notice=self.gone_notice())
        except ImportError:  # pragma: no cover - ipywidgets is a core dependency
            return
        self.output.show({**self.controls.widget._repr_mimebundle_(), "text/plain": ""})

    def gone_notice(self) -> str:
        """What the row says, in the front end, when the kernel following the running job is gone."""
        return (f"The kernel that followed job {self.job_id} is gone: this panel no longer updates and its buttons "
                f"do nothing. The job may still run; re-attach from a kernel: %synth_train --attach {self.job_id}")

    def snapshot(self) -> dict[str, Any]:
        """What replaces the row when it is over: ``head`` and the buttons' last state."""
        head = self._head()
        return self.controls.snapshot(head, ended=self._ended()) if self.controls is not None else {"text/plain": head}

    def end(self, spawn: Callable[[Coroutine[Any, Any, None]], object]) -> None:
        """Nothing is left to press: text now, or once the keyboard focus the row holds has left it (the front
        end's message may come on any thread; ``spawn`` runs the replacement on the panel's loop)."""
        if self.controls is None:
            return
        if not self.controls.holds_focus:
            self.output.freeze()
            return

        async def freeze() -> None:
            self.output.freeze()

        self.controls.release_when_unfocused(lambda: spawn(freeze()))
