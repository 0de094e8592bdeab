"""Live metric chart: a job's ``ChartData`` redrawn to PNG at a limited rate and shown in place.

The chart renders with matplotlib's Agg canvas straight to PNG bytes (``synth_nb.flows.chart_png``) and
shows them through ONE display output that is updated in place (its ``display_id``), so it works with any
matplotlib backend and in every front end (JupyterLab, Notebook 7, VS Code, Colab, nbconvert), and the
saved notebook keeps the last frame. What it plots is the flow's ``chart`` (SFT loss, RL reward,
prompt-learning score with best-so-far, the search baseline and the held-out scores).

The PNG is transparent with dark ink; under a dark JupyterLab (or VS Code) theme the output's own style
inverts it, so the chart follows the theme instead of showing a white block. Until the first metric
arrives the output is a sentence, not empty axes.
"""

from __future__ import annotations

import asyncio
import base64
import html
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from synth_nb.flows import get_flow
from synth_nb.flows.chart import ChartData, ChartSpec, SeriesBuffer
from synth_nb.flows.chart_png import DEFAULT_BUCKETS, ChartCanvas, downsampled_series
from synth_nb.job.report_html import chart_alt

__all__ = ["LiveChart"]

#: seconds between redraws: <= 1 redraw/s (a live frame costs ~10 ms; the values table under the status
#: line, rendered as often, shows the newest numbers)
DEFAULT_MIN_INTERVAL = 1.0
#: drawing takes at most 1/REDRAW_COST_FACTOR of a core: after a draw that cost ``d`` CPU seconds, the next
#: waits at least ``REDRAW_COST_FACTOR * d`` (a 60 ms draw: one every 2.4 s; the values table under the
#: status line stays live meanwhile, and the final frame is always drawn)
REDRAW_COST_FACTOR = 40.0
#: ... but a live chart is never left longer than this without a frame while data arrives
MAX_INTERVAL = 5.0
#: dark themes show the transparent, dark-ink PNG inverted (hue turned back, so colours keep their meaning)
_THEME_STYLE = ("<style>body[data-jp-theme-light='false'] img.synth-chart,body.vscode-dark img.synth-chart"
                "{filter:invert(1) hue-rotate(180deg)}</style>")


def _new_display_id() -> str:
    return f"synth-chart-{uuid.uuid4().hex[:12]}"


@dataclass
class LiveChart:
    """The chart for one job. Feed it metric points and events; it redraws at most every ``min_interval``,
    and never spends more than ``1 / cost_factor`` of a core drawing (``interval``).

    ``clock`` is injectable so the rate limit can be tested without sleeping.
    """

    flow: str
    min_interval: float = DEFAULT_MIN_INTERVAL
    cost_factor: float = REDRAW_COST_FACTOR
    buckets: int = DEFAULT_BUCKETS
    title: str | None = None
    figsize: tuple[float, float] = (8.0, 3.2)
    dpi: int = 80
    clock: Callable[[], float] = time.monotonic
    data: ChartData = field(init=False)
    redraws: int = field(init=False, default=0)
    last_render_seconds: float = field(init=False, default=0.0)
    #: CPU seconds the last render took (its thread's, so a loaded machine does not stretch it)
    last_render_cpu: float = field(init=False, default=0.0)
    #: the output this chart updates in place (a caller may choose it before the chart is displayed)
    display_id: str = field(default_factory=_new_display_id)
    _dirty: bool = field(init=False, default=False)
    _last_draw: float = field(init=False, default=float("-inf"))
    _shown: bool = field(init=False, default=False)
    #: the job is over: an empty chart now says that nothing was reported, not that it is waiting
    ended: bool = field(init=False, default=False)
    _png: bytes | None = field(init=False, default=None)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    _canvas: ChartCanvas | None = field(init=False, default=None)
    #: id of the latest-values table (in the status output), which describes the chart image
    table_id: str = field(init=False, default_factory=lambda: f"synth-chart-{uuid.uuid4().hex[:12]}")
    #: bumped by every point that fed the chart: the latest values are computed once per change, not once
    #: per reader (the status table, its text copy and the image's alt text each read them)
    _version: int = field(init=False, default=0)
    _rows: tuple[int, list[dict[str, Any]]] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.data = ChartData(get_flow(self.flow).chart)

    @property
    def spec(self) -> ChartSpec:
        return self.data.spec

    @property
    def series(self) -> dict[str, SeriesBuffer]:
        return self.data.series

    @property
    def references(self) -> dict[str, float]:
        """Reference scores reported so far (prompt learning: search baseline, held-out scores)."""
        return self.data.references

    # ------------------------------------------------------------------ data in
    def add_metric(self, point: Any) -> bool:
        """Add a ``MetricPoint``. Returns True if it fed the chart (which then needs a redraw)."""
        used = self.data.add_metric(point)
        self._changed(used)
        return used

    def add_event(self, event: Any) -> bool:
        """Add an ``Event``; only some (prompt-learning trials and baselines) carry chart data."""
        used = self.data.add_event(event)
        self._changed(used)
        return used

    def extend(self, metrics: Iterable[Any] = (), events: Iterable[Any] = ()) -> None:
        self._changed(self.data.extend(metrics, events))

    def _changed(self, used: bool) -> None:
        if used:
            self._dirty = True
            self._version += 1

    @property
    def dirty(self) -> bool:
        return self._dirty

    @property
    def point_count(self) -> int:
        return self.data.point_count

    # ------------------------------------------------------------------ text alternative
    def latest_values(self) -> list[dict[str, Any]]:
        """One row per non-empty series: label, latest step and value, best value (the text alternative)."""
        if self._rows is None or self._rows[0] != self._version:
            self._rows = (self._version, self.data.latest_values())
        return self._rows[1]

    def text_table(self) -> str:
        rows = self.latest_values()
        if not rows:
            return f"{self.chart_title()}: {self.spec.waiting_text()}"
        head = f"{'series':<22} {'step':>8} {'latest':>10} {'best':>10} {'points':>7}"
        lines = [self.chart_title(), head]
        for r in rows:
            step = "" if r["step"] is None else str(r["step"])
            lines.append(f"{r['series']:<22} {step:>8} {r['latest']:>10.4f} {r['best']:>10.4f} {r['points']:>7}")
        return "\n".join(lines)

    def html_table(self) -> str:
        rows = self.latest_values()
        if not rows:
            return ""  # the chart output itself says it is waiting
        cells = "".join(
            f"<tr><td>{r['series']}</td><td>{'' if r['step'] is None else r['step']}</td>"
            f"<td>{r['latest']:.4f}</td><td>{r['best']:.4f}</td></tr>"
            for r in rows
        )
        return (f"<table class='synth-chart-table' id='{self.table_id}' "
                f"aria-label='latest values of {self.chart_title()}'>"
                "<thead><tr><th>series</th><th>step</th><th>latest</th><th>best</th></tr></thead>"
                f"<tbody id='{self.table_id}-values'>{cells}</tbody></table>")

    def alt_text(self) -> str:
        """The image's alt: what the chart shows now, e.g. "… best so far 0.81 at rollouts used 720; baseline
        (search) 0.65"."""
        return chart_alt(self.chart_title(), self.data, self.latest_values())  # the report's wording too

    def chart_title(self) -> str:
        return self.title or self.spec.title

    # ------------------------------------------------------------------ rendering
    def render_png(self, *, live: bool = False) -> bytes:
        """Draw every series (downsampled) and return PNG bytes; the figure is reused between redraws.

        ``live``: a frame while the job runs, blitted onto a kept background with limits that grow with
        headroom (cheap); otherwise limits fit the data exactly (the first and the final frame).
        """
        started, cpu = time.perf_counter(), time.thread_time()
        with self._lock:
            first = self._canvas is None
            canvas = self._new_canvas()
            png = canvas.draw(downsampled_series(self.data, self.buckets), self.data.reference_values(),
                              self.data.xlabel(), live=live)
        self.last_render_seconds = time.perf_counter() - started
        if live and not first:  # the first frame also pays for matplotlib's start-up (imports, fonts)
            self.last_render_cpu = time.thread_time() - cpu
        return png

    def _new_canvas(self) -> ChartCanvas:
        """The figure, made on first use (the caller holds ``_lock``)."""
        if self._canvas is None:
            self._canvas = ChartCanvas(self.spec, self.chart_title(), self.figsize, self.dpi)
        return self._canvas

    def prepare(self) -> None:
        """Make the figure now (matplotlib's imports, fonts and axes: a second of CPU, many more of wall time on
        a loaded machine), so the first frame costs what any frame costs; ``display`` runs it in a background
        thread while the chart waits for its first point."""
        with self._lock:
            self._new_canvas()

    def mimebundle(self, png: bytes | None = None) -> dict[str, Any]:
        """PNG; the same as an ``<img>`` with alt text, described by the latest-values table; the table as text.

        HTML is what JupyterLab, Notebook 7 and VS Code show; ``image/png`` stays for exports and viewers.
        Before the first metric (no ``png``) the output is the waiting sentence alone.
        """
        if png is None and self.data.empty:
            return self.waiting_bundle()
        png = png if png is not None else (self._png or self.render_png())
        data = base64.b64encode(png).decode("ascii")
        alt = html.escape(self.alt_text(), quote=True)
        img = (f"{_THEME_STYLE}<img class='synth-chart' src='data:image/png;base64,{data}' alt='{alt}' "
               f"aria-describedby='{self.table_id} {self.table_id}-values'>")  # the table's name, then its values
        legend = self.spec.legend
        if legend:  # two series that could be read one for the other: one sentence says which is which
            img += f"<p class='synth-chart-legend'>{html.escape(legend)}</p>"
        return {"image/png": data, "text/html": img,
                "text/plain": self.text_table() + (f"\n{legend}" if legend else "")}

    def waiting_bundle(self) -> dict[str, Any]:
        """What the chart output says while there is nothing to draw (and after a job that drew nothing)."""
        text = f"{self.chart_title()}: " + ("the job reported no metrics" if self.ended else self.spec.waiting_text())
        return {"text/html": f"<p class='synth-chart-waiting'>{html.escape(text)}</p>", "text/plain": text}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return self.mimebundle()

    def interval(self) -> float:
        """Seconds between redraws: ``min_interval``, or more when live frames are costly (``cost_factor``),
        up to ``MAX_INTERVAL``."""
        return min(MAX_INTERVAL, max(self.min_interval, self.cost_factor * self.last_render_cpu))

    def seconds_until_redraw(self) -> float:
        """How long until the rate limit allows the next redraw (0 if it already does, and before the first
        frame: the first point is drawn as soon as it arrives, not an interval after the waiting sentence)."""
        if self._png is None:
            return 0.0
        return max(0.0, self.interval() - (self.clock() - self._last_draw))

    def should_redraw(self) -> bool:
        return self._dirty and self.seconds_until_redraw() <= 0.0

    def redraw(self, *, force: bool = False) -> bool:
        """Render and push to the display output if dirty and the rate limit allows (or ``force``)."""
        if not force and not self.should_redraw():
            return False
        self._dirty = False
        self._last_draw = self.clock()
        self.publish(self.render_png(live=True))
        return True

    async def redraw_async(self, *, force: bool = False) -> bool:
        """Like :meth:`redraw` but renders in a worker thread so the kernel's event loop stays responsive."""
        if not force and not self.should_redraw():
            return False
        self._dirty = False
        self._last_draw = self.clock()
        png = await asyncio.to_thread(self.render_png, live=True)
        self.publish(png)
        return True

    def publish(self, png: bytes | None) -> None:
        """Show a rendered PNG (None: the last one, or the waiting sentence) in this chart's output, in place."""
        from IPython.display import update_display

        if png is not None:
            self._png = png
        self.redraws += 1
        if self._shown:
            update_display(self.mimebundle(self._png), raw=True, display_id=self.display_id)

    def display(self) -> None:
        """Create the one display output this chart updates in place (by ``display_id``)."""
        from IPython.display import display

        self._dirty = False
        self._last_draw = self.clock()
        self._png = None if self.data.empty else self.render_png()
        display(self.mimebundle(self._png), raw=True, display_id=self.display_id)
        self._shown = True
        if self._png is None:
            threading.Thread(target=self.prepare, name="synth-chart-prepare", daemon=True).start()

    @property
    def png(self) -> bytes | None:
        """The last rendered PNG (for export)."""
        return self._png
