"""The one chart renderer: a ``ChartData`` drawn with matplotlib's Agg canvas straight to PNG bytes.

No display and no pyplot global state, so it works under any matplotlib backend, in a worker thread and
headless. The notebook's live chart keeps one ``ChartCanvas`` across redraws; a summary renders once.

The live chart's PNG has a transparent background and dark ink, so it sits on a light page as it is; a
dark theme shows it through a colour-inverting CSS filter (``synth_nb.notebook.chart``) instead of as a
white block. A PNG written to a file (the summary curve) is drawn on white.
"""

from __future__ import annotations

import io
import threading
from typing import TYPE_CHECKING, Any

from synth_nb.flows.chart import ChartData, ChartSpec, ReferenceSpec, SeriesSpec

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEFAULT_BUCKETS", "WAITING_TEXT", "ChartCanvas", "chart_png", "downsampled_series",
           "import_in_background", "minmax_downsample"]

#: at most this many (min, max) buckets per series; 2 points per bucket stay far below 150 ms to draw
DEFAULT_BUCKETS = 600
WAITING_TEXT = "waiting for the first metric…"


_IMPORTING: list[threading.Thread] = []


def _import_renderer() -> None:
    try:
        import numpy  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
        from matplotlib.ticker import MaxNLocator  # noqa: F401
    except ImportError:  # the chart itself says what is missing, when it is drawn
        pass


def import_in_background() -> None:
    """Import matplotlib's Agg canvas and numpy (seconds) in a thread while a job runs, once per process,
    so the chart at the job's end does not wait for them; an import meanwhile waits for this one."""
    if not _IMPORTING:
        _IMPORTING.append(threading.Thread(target=_import_renderer, name="synth-nb-chart-import", daemon=True))
        _IMPORTING[0].start()


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
    """One Agg figure kept across redraws: only line data, limits, labels and the legend change.

    Rebuilding the figure each time cost about twice as much (axes, ticks and text layout dominate).
    """

    def __init__(self, spec: ChartSpec, title: str, figsize: tuple[float, float], dpi: int, *,
                 transparent: bool = True) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator

        self.spec, self.dpi, self.transparent = spec, dpi, transparent
        self.fig = Figure(figsize=figsize, dpi=dpi)
        FigureCanvasAgg(self.fig)
        self.ax = self.fig.add_subplot(1, 1, 1)
        self.ax.set_title(title, fontsize=10)
        self.ax.set_xlabel(spec.xlabel)
        self.ax.set_ylabel(spec.ylabel)
        self.ax.grid(True, alpha=0.3)
        self.ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps, trials and rollouts are counts
        # fixed margins: tight_layout measured ~50 ms per redraw, a third of the budget; the legend sits
        # right of the axes, so it never hides the newest points or the markers at the right edge
        self.fig.subplots_adjust(left=0.09, right=0.66, top=0.9, bottom=0.17)
        self.waiting = self.fig.text(0.5, 0.5, WAITING_TEXT, ha="center", va="center", color="0.3")
        self.lines: dict[str, Any] = {}
        self.refs: dict[str, Any] = {}
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

    def _reference(self, ref: ReferenceSpec, value: float, right_edge: float) -> None:
        """A ``during`` score as a dashed line across the chart; an ``after`` one as a marker at the right edge."""
        line = self.refs.get(ref.key)
        if line is None:
            if ref.when == "during":
                line = self.ax.axhline(value, linestyle="--", linewidth=1.0, color=ref.color)
            else:
                (line,) = self.ax.plot([], [], linestyle="none", marker=ref.marker, markersize=9,
                                       color=ref.color, markeredgecolor="0.1", markeredgewidth=0.6, zorder=5)
            self.refs[ref.key] = line
        if ref.when == "during":
            line.set_ydata([value, value])
        else:
            line.set_data([right_edge], [value])
        line.set_label(f"{ref.label} {value:.3f}")

    def draw(self, series: list[tuple[SeriesSpec, Any, Any]], references: list[tuple[ReferenceSpec, float]],
             xlabel: str | None = None) -> bytes:
        """Set each series' points and the reference scores; return the figure as PNG bytes."""
        left, right = float("inf"), 0.0
        for s, dx, dy in series:
            line = self._line(s)
            line.set_data(dx, dy)
            if s.style == "line":
                line.set_marker("o" if len(dx) < 30 else "")
            if len(dx):
                left, right = min(left, float(dx[0])), max(right, float(dx[-1]))
        # scores measured after the run stand a little right of the curve's end, apart from its points
        right_edge = right + 0.04 * (right - left) if right > left else right + 1.0
        for ref, value in references:
            self._reference(ref, value, right_edge)
        self.ax.set_xlabel(xlabel or self.spec.xlabel)
        empty = not series and not references
        self.ax.set_visible(not empty)  # no ±0.04 axes around nothing: just the waiting note
        self.waiting.set_visible(empty)
        key = (tuple(self.lines), tuple((r.key, round(v, 3)) for r, v in references))
        if key != self.legend_key and not empty:
            self.ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False,
                           borderaxespad=0.0)
            self.legend_key = key
        self.ax.relim()
        self.ax.autoscale_view()
        out = io.BytesIO()
        self.fig.savefig(out, format="png", dpi=self.dpi, transparent=self.transparent)
        return out.getvalue()


def chart_png(data: ChartData, title: str, *, figsize: tuple[float, float] = (8.4, 3.6),
              dpi: int = 110) -> bytes | None:
    """``data`` drawn once as PNG bytes on white (a file is seen outside the notebook's theme); None when no
    series has a point."""
    series = downsampled_series(data)
    if not series:
        return None
    canvas = ChartCanvas(data.spec, title, figsize, dpi, transparent=False)
    return canvas.draw(series, data.reference_values(), data.xlabel())
