"""What a monitor panel prints where no front end draws widgets: a notebook run by nbconvert, papermill or
nbclient, or a terminal IPython.

There the panel shows no button row (nobody can press it, and its text would stay in the saved notebook);
its status, chart and summary outputs are kept (replaced in place, so the saved notebook holds their last
state), the summary's text copy shortened to its first lines. How the job goes is said in printed lines: a
progress line at most each tenth of the work or every 30 s (``synth_nb.job.quiet``, the rule the terminal
follows off a TTY), then a final block, so a papermill log and the saved notebook read as a short text.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from typing import Any

from synth_nb.job.quiet import QuietProgress
from synth_nb.notebook._frontend import has_widget_frontend
from synth_nb.secrets import mask_text
from synth_nb.untrusted import inert

__all__ = ["SUMMARY_LINES", "PanelLines", "is_headless"]

#: the summary's text copy keeps its first lines (its Markdown or HTML copy keeps them all)
SUMMARY_LINES = 30


def is_headless() -> bool:
    """No front end draws widgets in this kernel (or there is no kernel)."""
    from IPython import get_ipython

    return not has_widget_frontend(get_ipython())


class PanelLines:
    """The printed lines of one headless panel, each sent for the cell that showed it (``context``)."""

    def __init__(self, job: Any, *, clock: Callable[[], float], wall: Callable[[], float]) -> None:
        self.job = job
        self.quiet = QuietProgress(job, clock=clock, wall=wall)

    def say(self, text: str, context: contextvars.Context | None) -> None:
        """Print ``text``: each line inert (the backend's names and statuses never become control sequences,
        which a notebook renders as colours), the job's secrets masked."""
        shown = mask_text("\n".join(inert(line) for line in text.splitlines()), tuple(getattr(self.job, "hidden", ())))

        def write() -> None:
            print(shown, flush=True)

        if context is not None:  # the kernel sends it for the cell whose context this is
            context.copy().run(write)
        else:
            write()

    def progress(self, context: contextvars.Context | None) -> None:
        """A progress line, if one is due."""
        line = self.quiet.poll()
        if line is not None:
            self.say(f"{self.job.id} progress: {line}", context)

    def final(self, context: contextvars.Context | None, said: str = "", warnings: Sequence[str] = ()) -> None:
        """The final block: how the job ended, every metric's last value, its run-health ``warnings`` (each
        one line), where its result files went."""
        lines = [*self.quiet.final_lines(), *(f"  warning: {line}" for line in warnings)]
        self.say("\n".join([*lines, *([f"  {said}"] if said else [])]), context)
