"""``--stream-format chart``: one live terminal panel per job, redrawn in place at most twice a second.

Each panel holds the flow's chart (the same ``ChartSpec`` the notebook draws, rendered with plotext), a
status line (status, elapsed, progress, ETA) and the newest meaningful events. rich's ``Live`` redraws the
panels in place, so the scrollback does not grow with the number of events; when the jobs end the final
panels stay on screen and the usual final block follows. Off a terminal the CLI prints lines instead.
What a panel shows of the backend's words (events, status) is made inert (``synth_nb.untrusted.inert``).
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
from synth_nb.untrusted import inert

__all__ = ["ChartBoard", "chart_legend", "render_chart"]

#: the fastest redraw: the issue's ≤ 2 redraws/s keeps a slow terminal (or ssh) responsive
MIN_INTERVAL = 0.5
#: the chart's rows: at least enough to read a trend, at most what a tall terminal needs
MIN_CHART_ROWS, MAX_CHART_ROWS = 6, 20
_STATUS_STYLE = {"succeeded": "bold green", "failed": "bold red", "error": "bold red", "cancelled": "bold yellow"}


#: one marker per series, in order, so series stay apart on a terminal without colour
_MARKERS = ("braille", "+", "x", "o")
#: what each marker looks like in the legend
_GLYPHS = {"braille": "⣿", "dot": "•"}


def _rgb(color: str | None) -> tuple[int, int, int] | None:
    if not color or not color.startswith("#") or len(color) != 7:
        return None
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def _series(data: ChartData) -> list[tuple[Any, Any, Any, str]]:
    """Series with points, each with its own marker (by its place in the flow's chart, so it never changes)."""
    out = []
    for index, buf in enumerate(data.series.values()):
        x, y = buf.xy()
        if len(x):
            out.append((buf.spec, x, y, _MARKERS[index % len(_MARKERS)]))
    return out


def render_chart(data: ChartData, width: int, height: int) -> str:
    """The chart as text (ANSI colours) for a ``width`` × ``height`` cell area; a note while empty.

    Each series has its own colour (the notebook's) and marker; the legend is drawn beside the panel
    (``chart_legend``), not inside the plot, where it would cover the curves on a small terminal.
    """
    import plotext as plt

    series = _series(data)
    if not series:
        return f"\n  {data.spec.waiting_text()}\n"  # what it waits for, in the chart's words
    plt.clear_figure()
    plt.plotsize(max(width, 30), max(height, 6))
    plt.theme("clear")  # the x label is in the legend line: two rows fewer for the curves
    for spec, x, y, marker in series:
        xs, ys = x.tolist(), y.tolist()
        color = _rgb(spec.color)
        if spec.style == "points":
            plt.scatter(xs, ys, marker=marker, color=color)
        else:
            plt.plot(xs, ys, marker=marker, color=color)
    low = min(float(x[0]) for _, x, _, _ in series)
    high = max(float(x[-1]) for _, x, _, _ in series)
    for ref, value in data.reference_values():
        if ref.when == "during":
            plt.plot([low, high], [value, value], color="gray", marker="-")
        else:  # measured after the run (held-out): a point at the right edge, not a line through the curve
            plt.scatter([high], [value], marker="*", color="gray")
    return str(plt.build()).rstrip("\n")


def chart_legend(data: ChartData) -> Any:
    """One line naming every drawn series with its marker in its colour, then the reference values."""
    from rich.text import Text

    legend = Text()
    for spec, _, _, marker in _series(data):
        glyph = _GLYPHS.get(marker, marker)
        legend.append(f"{glyph}{glyph} ", style=spec.color or "")
        legend.append(f"{spec.label}   ")
    for ref, value in data.reference_values():
        legend.append("-- " if ref.when == "during" else "* ", style="grey50")
        legend.append(f"{ref.label} {value:.3f}   ")
    legend.append(f"x: {data.xlabel()}", style="dim")
    legend.no_wrap, legend.overflow = True, "ellipsis"
    return legend


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

    def status_line(self) -> str:
        elapsed = self.clock() - self.started
        progress = progress_of(self.job.status_doc, self.job.events[-300:], elapsed, status=self.job.status)
        parts = [f"{self.job.id} ({self.flow.label}{'/' + self.job.algorithm if self.job.algorithm else ''})",
                 f"status {self.job.status}", f"elapsed {format_duration(elapsed)}"]
        if progress.label():
            parts.append(progress.label())
        if progress.eta_seconds is not None and not self.job.done:
            parts.append(f"ETA {format_duration(progress.eta_seconds)}")
        return inert(" · ".join(parts))  # the status and algorithm are the backend's words

    def renderable(self, width: int, height: int) -> Any:
        """The panel in at most ``height`` rows: the chart gets what the borders, status, legend and the
        newest events (as many as fit, one row each) leave."""
        from rich.console import Group
        from rich.panel import Panel
        from rich.text import Text

        fixed = 2 + 1 + 1  # borders, status line, legend
        shown = min(len(self.newest) or 1, max(0, height - fixed - MIN_CHART_ROWS))
        chart_rows = max(3, min(MAX_CHART_ROWS, height - fixed - shown))
        chart = Text.from_ansi(render_chart(self.chart, width - 4, chart_rows))
        chart.no_wrap, chart.overflow = True, "crop"
        status = Text(self.status_line(), style=_STATUS_STYLE.get(self.job.status, "bold"),
                      no_wrap=True, overflow="ellipsis")
        newest = list(self.newest)[-shown:] if shown else []
        events = Text("\n".join(newest) or ("no events yet" if shown else ""), style="dim",
                      no_wrap=True, overflow="ellipsis")
        title = f"{self.flow.chart.title} · y: {self.flow.chart.ylabel}"
        parts = [chart, chart_legend(self.chart), status] + ([events] if shown else [])
        return Panel(Group(*parts), title=title, border_style="cyan", height=min(height, chart_rows + fixed + shown))


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
