"""The one chart renderer: a ``ChartData`` drawn with matplotlib's Agg canvas straight to PNG bytes.

No display and no pyplot global state, so it works under any matplotlib backend, in a worker thread and
headless. The notebook's live chart keeps one ``ChartCanvas`` across redraws; a summary renders once.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from synth_nb.flows.chart import ChartData, ChartSpec, SeriesSpec

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEFAULT_BUCKETS", "ChartCanvas", "chart_png", "downsampled_series", "minmax_downsample"]

#: at most this many (min, max) buckets per series; 2 points per bucket stay far below 150 ms to draw
DEFAULT_BUCKETS = 600


def minmax_downsample(x: np.ndarray, y: np.ndarray, buckets: int = DEFAULT_BUCKETS) -> tuple[np.ndarray, np.ndarray]:
    """Keep the min and the max of each of ``buckets`` equal slices, so spikes survive downsampling.

    Returns the input unchanged when it is already small. First and last points are always kept.
    """
    import numpy as np

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


def downsampled_series(data: ChartData, buckets: int = DEFAULT_BUCKETS) -> list[tuple[SeriesSpec, Any, Any]]:
    """Every non-empty series of ``data`` as (spec, x, y), downsampled for drawing."""
    drawn = []
    for buf in data.series.values():
        x, y = buf.xy()
        if len(x):
            dx, dy = minmax_downsample(x, y, buckets)
            drawn.append((buf.spec, dx, dy))
    return drawn


class ChartCanvas:
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

    def draw(self, series: list[tuple[SeriesSpec, Any, Any]], baseline: float | None) -> bytes:
        """Set each series' points and the baseline line; return the figure as PNG bytes."""
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


def chart_png(data: ChartData, title: str, *, figsize: tuple[float, float] = (7.0, 3.6),
              dpi: int = 110) -> bytes | None:
    """``data`` drawn once as PNG bytes; None when no series has a point."""
    series = downsampled_series(data)
    if not series:
        return None
    return ChartCanvas(data.spec, title, figsize, dpi).draw(series, data.baseline)
