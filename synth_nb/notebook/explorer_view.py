"""A flow's explorer (or its samples: ``show_samples``) in a notebook: one output that follows a running job
and stays as a copy.

``show_explorer(job)`` displays ``job.explorer()`` (static HTML, with Markdown and text alternatives) by
display id. While the job runs, a task on the loop the job lives on redraws it when candidate events have
arrived, at most once every ``interval`` seconds, and once more when the job ends; the last frame is
what the saved notebook keeps. ``await view`` waits for that last frame.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
import uuid
from collections.abc import Generator
from typing import Any, Self

from synth_nb.flows import get_flow
from synth_nb.job import Job
from synth_nb.job.samples import sample_table
from synth_nb.notebook.kernel_loop import KernelLoop

__all__ = ["ExplorerView", "SamplesView", "show_explorer", "show_samples"]


class ExplorerView:
    """A displayed explorer of one job, redrawn while the job runs."""

    def __init__(self, job: Job, *, interval: float = 2.0) -> None:
        self.job = job
        self.interval = interval
        self.frames = 0
        self.display_id = f"synth-explorer-{uuid.uuid4().hex}"
        self._shown = False
        self._task: concurrent.futures.Future[int] | None = None

    def view(self) -> Any:
        """What is drawn: the job's explorer of everything streamed so far."""
        return self.job.explorer()

    def redraws_on(self) -> frozenset[str]:
        """The event types after which the view is drawn again."""
        return get_flow(self.job.flow).explorer_event_types

    def bundle(self) -> dict[str, Any]:
        return dict(self.view()._repr_mimebundle_())

    def display(self) -> Self:
        from IPython.display import display

        display(self.bundle(), raw=True, display_id=self.display_id)
        self._shown = True
        self.frames = 1
        return self

    def redraw(self) -> None:
        """Replace the output (by its display id) with the explorer of everything streamed so far."""
        from IPython.display import update_display

        if self._shown:
            update_display(self.bundle(), raw=True, display_id=self.display_id)
            self.frames += 1

    def start(self) -> Self:
        """Follow the job on its own loop (the kernel's once the magic has handed the job over). Idempotent."""
        if self._task is None and not self.job.done:
            loop = KernelLoop(self.job.loop) if self.job.loop is not None else KernelLoop.capture()
            self._task = loop.spawn(self.follow())
        return self

    async def follow(self) -> int:
        """Redraw after candidate events, throttled; a final redraw when the job is done. Returns frames drawn."""
        redraws_on = self.redraws_on()
        dirty, last = False, time.monotonic()
        async for update in self.job.updates():
            if update.kind == "done":
                break
            if update.kind == "event" and update.event is not None and update.event.type in redraws_on:
                dirty = True
            if dirty and time.monotonic() - last >= self.interval:
                self.redraw()
                dirty, last = False, time.monotonic()
        self.redraw()
        return self.frames

    async def wait(self) -> int:
        """Wait until the final frame is drawn, then send it again from the calling cell (headless runners
        keep only outputs sent while their cell runs)."""
        if self._task is not None:
            await asyncio.wrap_future(self._task)
        self.redraw()
        return self.frames

    def __await__(self) -> Generator[Any, None, int]:
        return self.wait().__await__()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": f"ExplorerView(job={self.job.id!r}, frames={self.frames})"}


class SamplesView(ExplorerView):
    """A displayed sample table of one job (``job.rollouts()`` / ``job.samples()``), redrawn as samples arrive."""

    def __init__(self, job: Job, *, interval: float = 2.0) -> None:
        super().__init__(job, interval=interval)
        spec = get_flow(job.flow).sample_spec
        self.kind = spec.kind if spec is not None else "samples"
        self.display_id = f"synth-samples-{uuid.uuid4().hex}"

    def view(self) -> Any:
        return sample_table(self.job, self.kind)

    def redraws_on(self) -> frozenset[str]:
        spec = get_flow(self.job.flow).sample_spec
        return spec.event_types if spec is not None else frozenset()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": f"SamplesView(job={self.job.id!r}, {self.kind}, frames={self.frames})"}


def show_samples(job: Job, *, live: bool = True, interval: float = 2.0) -> SamplesView:
    """Display the samples behind ``job``'s numbers (RL rollouts, SFT samples); with ``live`` (and the job still
    running) redraw them as they arrive, and once more when it ends. ConfigError for a flow that has none."""
    sample_table(job, getattr(get_flow(job.flow).sample_spec, "kind", "rollouts"))  # says which flows have them
    view = SamplesView(job, interval=interval).display()
    return view.start() if live else view


def show_explorer(job: Job, *, live: bool = True, interval: float = 2.0) -> ExplorerView:
    """Display the explorer of ``job``; with ``live`` (and the job still running) keep it current."""
    view = ExplorerView(job, interval=interval).display()
    return view.start() if live else view
