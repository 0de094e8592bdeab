"""``--stream-format chart``: one live terminal panel per job, redrawn in place at most twice a second.

Each panel holds the flow's chart (the same ``ChartSpec`` the notebook draws, rendered with plotext), a
status line (status, elapsed, progress, ETA) and the newest meaningful events. rich's ``Live`` redraws the
panels in place, so the scrollback does not grow with the number of events; when the jobs end the final
panels stay on screen and the usual final block follows. Off a terminal the CLI prints lines instead.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from synth_nb.flows import get_flow
from synth_nb.flows.chart import ChartData
from synth_nb.job import Job, JobUpdate
from synth_nb.job.progress import format_duration, progress_of
from synth_nb.secrets import mask_text

__all__ = ["ChartBoard", "render_chart"]

#: the fastest redraw: the issue's ≤ 2 redraws/s keeps a slow terminal (or ssh) responsive
MIN_INTERVAL = 0.5
_STATUS_STYLE = {"succeeded": "bold green", "failed": "bold red", "error": "bold red", "cancelled": "bold yellow"}


def render_chart(data: ChartData, width: int, height: int) -> str:
    """The chart as text (ANSI colours) for a ``width`` × ``height`` cell area; a note while empty."""
    import plotext as plt

    series = [(buf.spec, *buf.xy()) for buf in data.series.values()]
    series = [(spec, x, y) for spec, x, y in series if len(x)]
    if not series:
        return "\n  waiting for the first metric…\n"
    plt.clear_figure()
    plt.plotsize(max(width, 30), max(height, 8))
    plt.theme("clear")
    plt.xlabel(data.xlabel())
    for spec, x, y in series:
        xs, ys = x.tolist(), y.tolist()
        if spec.style == "points":
            plt.scatter(xs, ys, label=spec.label, marker="dot")
        else:
            plt.plot(xs, ys, label=spec.label, marker="braille")
    low = min(float(x[0]) for _, x, _ in series)
    high = max(float(x[-1]) for _, x, _ in series)
    for ref, value in data.reference_values():
        if ref.when == "during":
            plt.plot([low, high], [value, value], label=f"{ref.label} {value:.3f}", color="gray", marker="-")
        else:  # measured after the run (held-out): a point at the right edge, not a line through the curve
            plt.scatter([high], [value], label=f"{ref.label} {value:.3f}", marker="x")
    return str(plt.build())


class _JobPanel:
    """What one job's panel shows, fed by the job's updates."""

    def __init__(self, job: Job, secrets: Sequence[str], events: int, clock: Callable[[], float]) -> None:
        self.job = job
        self.flow = get_flow(job.flow)
        self.chart = ChartData(self.flow.chart)
        self.secrets = tuple(s for s in secrets if s)
        self.newest: deque[str] = deque(maxlen=events)
        self.started = clock()
        self.clock = clock
        self.chart.extend(job.metrics, job.events)
        for event in job.events:
            self._note(event)

    def _note(self, event: Any) -> None:
        if self.flow.is_noise(event):
            return
        text = f"[{event.seq}] {event.type}" + (f": {event.message}" if event.message else "")
        self.newest.append(mask_text(text, self.secrets)[:200])

    def __call__(self, update: JobUpdate) -> None:
        if update.kind == "metric" and update.metric is not None:
            self.chart.add_metric(update.metric)
        elif update.kind == "event" and update.event is not None:
            self.chart.add_event(update.event)
            self._note(update.event)

    def status_line(self) -> str:
        elapsed = self.clock() - self.started
        progress = progress_of(self.job.status_doc, self.job.events[-300:], elapsed, status=self.job.status)
        parts = [f"{self.job.id} ({self.flow.label}{'/' + self.job.algorithm if self.job.algorithm else ''})",
                 f"status {self.job.status}", f"elapsed {format_duration(elapsed)}"]
        if progress.label():
            parts.append(progress.label())
        if progress.eta_seconds is not None and not self.job.done:
            parts.append(f"ETA {format_duration(progress.eta_seconds)}")
        return " · ".join(parts)

    def renderable(self, width: int, chart_height: int) -> Any:
        from rich.console import Group
        from rich.panel import Panel
        from rich.text import Text

        chart = Text.from_ansi(render_chart(self.chart, width - 4, chart_height))
        status = Text(self.status_line(), style=_STATUS_STYLE.get(self.job.status, "bold"))
        events = Text("\n".join(self.newest) or "no events yet", style="dim")
        title = f"{self.flow.chart.title} · y: {self.flow.chart.ylabel}"
        return Panel(Group(chart, status, events), title=title, border_style="cyan")


class ChartBoard:
    """Live panels for the followed jobs; ``await board.run(until)`` redraws until ``until`` finishes."""

    def __init__(self, jobs: Sequence[Job], secrets: Sequence[str], *, out: TextIO, events: int = 5,
                 clock: Callable[[], float] = time.monotonic) -> None:
        from rich.console import Console

        self.console = Console(file=out, force_terminal=True, highlight=False)
        self.panels = [_JobPanel(job, secrets, events, clock) for job in jobs]
        for job, panel in zip(jobs, self.panels, strict=True):
            job.add_listener(panel)
        self.redraws = 0
        self.clock = clock

    def _render(self) -> Any:
        from rich.console import Group

        width, height = self.console.size
        per_job = max(8, (height - 2) // max(1, len(self.panels)) - 4 - 5)
        return Group(*(p.renderable(width, min(per_job, 20)) for p in self.panels))

    async def run(self, until: asyncio.Future[Any]) -> None:
        """Redraw at most every ``MIN_INTERVAL`` seconds until ``until`` is done, then draw the final state."""
        from rich.live import Live

        with Live(self._render(), console=self.console, auto_refresh=False, transient=False) as live:
            while not until.done():
                await asyncio.wait({until}, timeout=MIN_INTERVAL)
                live.update(self._render(), refresh=True)
                self.redraws += 1
            live.update(self._render(), refresh=True)
