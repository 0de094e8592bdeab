"""Live metric chart: a metric buffer, min/max downsampling, and a rate-limited PNG redraw.

The chart renders with matplotlib's Agg canvas straight to PNG bytes and shows them through ONE display
output that is updated in place (``display_id``), so it works with any matplotlib backend and in every
front end (JupyterLab, Notebook 7, VS Code, Colab, nbconvert). Series per flow:

* SFT: ``train.loss`` and validation loss;
* RL: mean training reward and eval reward;
* prompt learning: trial score, best-so-far and a horizontal baseline line.
"""

from __future__ import annotations

import asyncio
import base64
import io
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from synth_nb.notebook.chart_series import ChartSpec, SeriesBuffer, SeriesSpec, spec_for_flow

__all__ = ["ChartSpec", "LiveChart", "SeriesSpec", "minmax_downsample"]

#: at most this many (min, max) buckets per series; 2 points per bucket stay far below 150 ms to draw
DEFAULT_BUCKETS = 600
DEFAULT_MIN_INTERVAL = 0.5  # seconds between redraws: <= 2 redraws/s


def minmax_downsample(x: np.ndarray, y: np.ndarray, buckets: int = DEFAULT_BUCKETS) -> tuple[np.ndarray, np.ndarray]:
    """Keep the min and the max of each of ``buckets`` equal slices, so spikes survive downsampling.

    Returns the input unchanged when it is already small. First and last points are always kept.
    """
    n = len(x)
    if buckets <= 0 or n <= 2 * buckets:
        return x, y
    size = -(-n // buckets)  # ceil
    padded = np.concatenate([y, np.full(size * buckets - n, y[-1])]) if size * buckets > n else y
    grid = padded.reshape(buckets, size)
    base = np.arange(buckets) * size
    lo = base + np.nanargmin(grid, axis=1)
    hi = base + np.nanargmax(grid, axis=1)
    idx = np.unique(np.clip(np.concatenate([lo, hi, [0, n - 1]]), 0, n - 1))
    return x[idx], y[idx]


class _Canvas:
    """One Agg figure kept across redraws: only line data, limits and the legend change.

    Rebuilding the figure each time cost about twice as much (axes, ticks and text layout dominate).
    """

    def __init__(self, spec: ChartSpec, title: str, figsize: tuple[float, float], dpi: int) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.spec, self.dpi = spec, dpi
        self.fig = Figure(figsize=figsize, dpi=dpi)
        FigureCanvasAgg(self.fig)
        self.ax = self.fig.add_subplot(1, 1, 1)
        self.ax.set_title(title, fontsize=10)
        self.ax.set_xlabel(spec.xlabel)
        self.ax.set_ylabel(spec.ylabel)
        self.ax.grid(True, alpha=0.3)
        # fixed margins: tight_layout measured ~50 ms per redraw, a third of the budget
        self.fig.subplots_adjust(left=0.12, right=0.98, top=0.9, bottom=0.17)
        self.waiting = self.ax.text(0.5, 0.5, "waiting for metrics…", ha="center", va="center",
                                    transform=self.ax.transAxes, color="0.5")
        self.lines: dict[str, Any] = {}
        self.baseline: Any = None
        self.legend_key: tuple[Any, ...] = ()

    def _line(self, s: SeriesSpec) -> Any:
        if s.key not in self.lines:
            if s.style == "points":
                (line,) = self.ax.plot([], [], linestyle="none", marker="o", markersize=3, alpha=0.6,
                                       label=s.label, color=s.color)
            elif s.style == "step":
                (line,) = self.ax.plot([], [], drawstyle="steps-post", linewidth=1.8, label=s.label, color=s.color)
            else:
                (line,) = self.ax.plot([], [], linewidth=1.2, markersize=3, label=s.label, color=s.color)
            self.lines[s.key] = line
        return self.lines[s.key]

    def draw(self, series: list[tuple[SeriesSpec, np.ndarray, np.ndarray]], baseline: float | None) -> bytes:
        for s, dx, dy in series:
            line = self._line(s)
            line.set_data(dx, dy)
            if s.style == "line":
                line.set_marker("o" if len(dx) < 30 else "")
        if baseline is not None:
            label = f"baseline ({baseline:.3f})"
            if self.baseline is None:
                self.baseline = self.ax.axhline(baseline, linestyle="--", linewidth=1.0, color="0.4", label=label)
            self.baseline.set_ydata([baseline, baseline])
            self.baseline.set_label(label)
        key = (tuple(self.lines), None if baseline is None else round(baseline, 3))
        if key != self.legend_key and (self.lines or baseline is not None):
            self.ax.legend(loc=self.spec.legend_loc, fontsize=8, frameon=False)
            self.legend_key = key
        self.waiting.set_visible(not self.lines and baseline is None)
        self.ax.relim()
        self.ax.autoscale_view()
        out = io.BytesIO()
        self.fig.savefig(out, format="png", dpi=self.dpi)
        return out.getvalue()


@dataclass
class LiveChart:
    """The chart for one job. Feed it metric points and events; it redraws at most every ``min_interval``.

    ``clock`` is injectable so the rate limit can be tested without sleeping.
    """

    flow: str
    min_interval: float = DEFAULT_MIN_INTERVAL
    buckets: int = DEFAULT_BUCKETS
    title: str | None = None
    figsize: tuple[float, float] = (6.4, 3.2)
    dpi: int = 80
    clock: Callable[[], float] = time.monotonic
    spec: ChartSpec = field(init=False)
    series: dict[str, SeriesBuffer] = field(init=False)
    baseline: float | None = field(init=False, default=None)
    redraws: int = field(init=False, default=0)
    last_render_seconds: float = field(init=False, default=0.0)
    _dirty: bool = field(init=False, default=False)
    _last_draw: float = field(init=False, default=float("-inf"))
    _handle: Any = field(init=False, default=None)
    _png: bytes | None = field(init=False, default=None)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    _canvas: _Canvas | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.spec = spec_for_flow(self.flow)
        self.series = {s.key: SeriesBuffer(s) for s in self.spec.series}
        for buf in self.series.values():
            if buf.spec.best_of is not None:
                buf.source = self.series[buf.spec.best_of]

    # ------------------------------------------------------------------ data in
    def add_metric(self, point: Any) -> bool:
        """Add a ``MetricPoint`` (or anything with name/step/value). Returns True if it fed a series."""
        name, step, value = getattr(point, "name", None), getattr(point, "step", None), getattr(point, "value", None)
        if name is None or value is None:
            return False
        if name in self.spec.baseline_metrics:
            self.baseline = float(value)
            self._dirty = True
            return True
        used = False
        for buf in self.series.values():
            if name in buf.spec.metric_names:
                buf.append_metric(int(step or 0), float(value))
                used = True
        self._dirty |= used
        return used

    def add_event(self, event: Any) -> bool:
        """Add an ``Event``; only prompt-learning trial/baseline events carry chart data."""
        etype = getattr(event, "type", "") or ""
        data = getattr(event, "data", None) or {}
        baseline = self.spec.baseline_from_event(etype, data)
        # a score of the baseline seen during the search (validation) beats the post-search held-out one,
        # so the baseline line compares like with like against the best-so-far line
        if baseline is not None and (self.baseline is None or etype != "prompt.learning.validation.summary"):
            self.baseline = baseline
            self._dirty = True
            return True
        used = False
        for buf in self.series.values():
            if buf.spec.from_event is None or buf.source is not None:
                continue
            sample = buf.spec.from_event(etype, data, len(buf.event_x) + 1)
            if sample is not None:
                buf.append_event(*sample)
                used = True
        self._dirty |= used
        return used

    def extend(self, metrics: Iterable[Any] = (), events: Iterable[Any] = ()) -> None:
        for m in metrics:
            self.add_metric(m)
        for e in events:
            self.add_event(e)

    @property
    def dirty(self) -> bool:
        return self._dirty

    @property
    def point_count(self) -> int:
        return sum(len(b.xy()[0]) for b in self.series.values())

    # ------------------------------------------------------------------ text alternative
    def latest_values(self) -> list[dict[str, Any]]:
        """One row per non-empty series: label, latest step and value, best value (the text alternative)."""
        rows: list[dict[str, Any]] = []
        for buf in self.series.values():
            x, y = buf.xy()
            if len(x) == 0:
                continue
            best = float(np.nanmax(y) if buf.spec.higher_is_better else np.nanmin(y))
            rows.append({"series": buf.spec.label, "step": int(x[-1]), "latest": float(y[-1]), "best": best,
                         "points": int(len(x))})
        if self.baseline is not None:
            rows.append({"series": "baseline", "step": None, "latest": self.baseline, "best": self.baseline,
                         "points": 1})
        return rows

    def text_table(self) -> str:
        rows = self.latest_values()
        if not rows:
            return f"{self.chart_title()}: waiting for metrics…"
        head = f"{'series':<22} {'step':>8} {'latest':>10} {'best':>10} {'points':>7}"
        lines = [self.chart_title(), head]
        for r in rows:
            step = "" if r["step"] is None else str(r["step"])
            lines.append(f"{r['series']:<22} {step:>8} {r['latest']:>10.4f} {r['best']:>10.4f} {r['points']:>7}")
        return "\n".join(lines)

    def html_table(self) -> str:
        rows = self.latest_values()
        if not rows:
            return "<p class='synth-chart-empty'>Waiting for metrics…</p>"
        cells = "".join(
            f"<tr><td>{r['series']}</td><td>{'' if r['step'] is None else r['step']}</td>"
            f"<td>{r['latest']:.4f}</td><td>{r['best']:.4f}</td></tr>"
            for r in rows
        )
        return (f"<table class='synth-chart-table' aria-label='latest values of {self.chart_title()}'>"
                "<thead><tr><th>series</th><th>step</th><th>latest</th><th>best</th></tr></thead>"
                f"<tbody>{cells}</tbody></table>")

    def chart_title(self) -> str:
        return self.title or self.spec.title

    # ------------------------------------------------------------------ rendering
    def render_png(self) -> bytes:
        """Draw every series (downsampled) and return PNG bytes; the figure is reused between redraws."""
        started = time.perf_counter()
        with self._lock:
            if self._canvas is None:
                self._canvas = _Canvas(self.spec, self.chart_title(), self.figsize, self.dpi)
            drawn = []
            for buf in self.series.values():
                x, y = buf.xy()
                if len(x):
                    dx, dy = minmax_downsample(x, y, self.buckets)
                    drawn.append((buf.spec, dx, dy))
            png = self._canvas.draw(drawn, self.baseline)
        self.last_render_seconds = time.perf_counter() - started
        return png

    def mimebundle(self, png: bytes | None = None) -> dict[str, Any]:
        """PNG plus the latest-values table as ``text/plain`` for front ends without images."""
        png = png if png is not None else (self._png or self.render_png())
        return {"image/png": base64.b64encode(png).decode("ascii"), "text/plain": self.text_table()}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return self.mimebundle()

    def seconds_until_redraw(self) -> float:
        """How long until the rate limit allows the next redraw (0 if it already does)."""
        return max(0.0, self.min_interval - (self.clock() - self._last_draw))

    def should_redraw(self) -> bool:
        return self._dirty and (self.clock() - self._last_draw) >= self.min_interval

    def redraw(self, *, force: bool = False) -> bool:
        """Render and push to the display output if dirty and the rate limit allows (or ``force``)."""
        if not force and not self.should_redraw():
            return False
        self._dirty = False
        self._last_draw = self.clock()
        png = self.render_png()
        self.publish(png)
        return True

    async def redraw_async(self, *, force: bool = False) -> bool:
        """Like :meth:`redraw` but renders in a worker thread so the kernel's event loop stays responsive."""
        if not force and not self.should_redraw():
            return False
        self._dirty = False
        self._last_draw = self.clock()
        png = await asyncio.to_thread(self.render_png)
        self.publish(png)
        return True

    def publish(self, png: bytes) -> None:
        """Send a rendered PNG to the display output (creating it on first use)."""
        self._png = png
        self.redraws += 1
        bundle = self.mimebundle(png)
        if self._handle is not None:
            self._handle.update(bundle, raw=True)

    def display(self) -> Any:
        """Create the one display output this chart updates in place; returns the display handle."""
        from IPython.display import display

        png = self.render_png()
        self._png = png
        self._dirty = False
        self._last_draw = self.clock()
        self._handle = display(self.mimebundle(png), raw=True, display_id=True)
        return self._handle

    @property
    def png(self) -> bytes | None:
        """The last rendered PNG (for export)."""
        return self._png
