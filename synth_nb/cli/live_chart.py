"""``--stream-format chart``: one live terminal panel per job, redrawn in place at most twice a second.

Each panel holds the flow's chart (the same ``ChartSpec`` the notebook draws, rendered with plotext by
``synth_nb.cli.terminal_chart``), its legend, a status line (status, elapsed, progress, ETA) and the newest
meaningful events. The job's id and the chart's name are the panel's title. The legend and the status line
wrap between their items to as many lines as the width needs, so nothing is cut at 80 columns. rich's
``Live`` redraws the panels in place, so the scrollback does not grow with the number of events; when the
jobs end the final panels stay on screen and the usual final block follows. Off a terminal the CLI prints
lines instead. What a panel shows of the backend's words (events, status) is made inert
(``synth_nb.untrusted.inert``).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from synth_nb.cli.terminal_chart import chart_series, draw, legend, packed, waiting_note
from synth_nb.flows import get_flow
from synth_nb.flows.chart import ChartData
from synth_nb.job import Job, JobUpdate
from synth_nb.job.progress import format_duration, progress_of
from synth_nb.secrets import mask_text
from synth_nb.untrusted import inert

__all__ = ["ChartBoard"]

#: the fastest redraw: the issue's ≤ 2 redraws/s keeps a slow terminal (or ssh) responsive
MIN_INTERVAL = 0.5
#: the chart's rows: at least enough to read a trend, at most what a tall terminal needs
MIN_CHART_ROWS, MAX_CHART_ROWS = 6, 20
_STATUS_STYLE = {"succeeded": "bold green", "failed": "bold red", "error": "bold red", "cancelled": "bold yellow"}


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
        self.newest.append(mask_text(inert(text), self.secrets)[:200])

    def __call__(self, update: JobUpdate) -> None:
        if update.kind == "metric" and update.metric is not None:
            self.chart.add_metric(update.metric)
        elif update.kind == "event" and update.event is not None:
            self.chart.add_event(update.event)
            self._note(update.event)

    def status_parts(self) -> list[str]:
        """``gepa · status running · elapsed 13 s · 32/200 rollouts (16%) · ETA 1 min 08 s`` as its items (the job
        id is the panel's title); the status and algorithm are the backend's words, made inert."""
        elapsed = self.clock() - self.started
        progress = progress_of(self.job.status_doc, self.job.events[-300:], elapsed, status=self.job.status)
        parts = [self.job.algorithm or self.flow.label, f"status {self.job.status}", f"elapsed {format_duration(elapsed)}"]
        if progress.label():
            parts.append(progress.label())
        if progress.eta_seconds is not None and not self.job.done:
            parts.append(f"ETA {format_duration(progress.eta_seconds)}")
        return [inert(part) for part in parts]

    def status_line(self) -> str:
        return " · ".join(self.status_parts())

    def title(self) -> str:
        return inert(f"{self.job.id} · {self.flow.chart.title} · y: {self.flow.chart.ylabel}")

    def renderable(self, width: int, height: int) -> Any:
        """The panel in at most ``height`` rows: the chart gets what the borders, status, legend and the
        newest events (as many as fit, one row each) leave."""
        from rich.console import Group
        from rich.panel import Panel
        from rich.text import Text

        inner = width - 4
        series, marks = chart_series(self.chart)
        key = legend(series, marks, self.chart.xlabel(), inner)
        status = packed([Text(part) for part in self.status_parts()], inner, " · ",
                        style=_STATUS_STYLE.get(self.job.status, "bold"))
        fixed = 2 + len(status) + len(key)  # borders, status and legend lines
        shown = min(len(self.newest) or 1, max(0, height - fixed - MIN_CHART_ROWS))
        chart_rows = max(3, min(MAX_CHART_ROWS, height - fixed - shown))
        chart = Text.from_ansi(draw(series, marks, inner, chart_rows, waiting_note(self.chart)))
        chart.no_wrap, chart.overflow = True, "crop"
        chart_rows = min(chart_rows, len(chart.plain.splitlines()))  # a note while empty: no blank rows
        newest = list(self.newest)[-shown:] if shown else []
        events = Text("\n".join(newest) or ("no events yet" if shown else ""), style="dim",
                      no_wrap=True, overflow="ellipsis")
        parts = [chart, *key, *status] + ([events] if shown else [])
        return Panel(Group(*parts), title=self.title(), border_style="cyan",
                     height=min(height, chart_rows + fixed + shown))


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
        per_job = max(MIN_CHART_ROWS + 4, (height - 1) // max(1, len(self.panels)))
        return Group(*(p.renderable(width, per_job) for p in self.panels))

    async def run(self, until: asyncio.Future[Any]) -> None:
        """Redraw at most every ``MIN_INTERVAL`` seconds until ``until`` is done, then draw the final state."""
        from rich.live import Live

        with Live(self._render(), console=self.console, auto_refresh=False, transient=False) as live:
            while not until.done():
                await asyncio.wait({until}, timeout=MIN_INTERVAL)
                live.update(self._render(), refresh=True)
                self.redraws += 1
            live.update(self._render(), refresh=True)
