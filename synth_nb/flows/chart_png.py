"""The one chart renderer: a ``ChartData`` drawn with matplotlib's Agg canvas straight to PNG bytes.

No display and no pyplot global state, so it works under any matplotlib backend, in a worker thread and
headless. The notebook's live chart keeps one ``ChartCanvas`` across redraws; a summary renders once.

The live chart's PNG has a transparent background and dark ink, so it sits on a light page as it is; a
dark theme shows it through a colour-inverting CSS filter (``synth_nb.notebook.chart``) instead of as a
white block. A PNG written to a file (the summary curve) is drawn on white.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import struct
import sys
import threading
import zlib
from typing import TYPE_CHECKING, Any

from synth_nb.flows.chart import ChartData, ChartSpec, ReferenceSpec, SeriesSpec

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEFAULT_BUCKETS", "WAITING_TEXT", "ChartCanvas", "chart_png", "downsampled_series",
           "import_in_background", "minmax_downsample"]

#: at most this many (min, max) buckets per series; 2 points per bucket stay far below 150 ms to draw
DEFAULT_BUCKETS = 600
WAITING_TEXT = "waiting for the first metric…"
#: live frames within which the data outgrowing the x limits again counts as fast growth
_FAST_GROWTH_FRAMES = 8


_IMPORTING: list[threading.Thread] = []


#: the nice value of the thread that imports the renderer while a job runs (the lowest priority)
_BACKGROUND_NICE = 19


def _import_renderer() -> None:
    if sys.platform == "linux":  # a Linux thread's nice value is its own (elsewhere it would be the process's)
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _BACKGROUND_NICE)
    try:
        import numpy  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
        from matplotlib.ticker import MaxNLocator  # noqa: F401
    except ImportError:  # the chart itself says what is missing, when it is drawn
        pass


def import_in_background() -> None:
    """Import matplotlib's Agg canvas and numpy (seconds) in a thread while a job runs, once per process,
    so the chart at the job's end does not wait for them; an import meanwhile waits for this one. The thread
    runs at the lowest priority, so it takes only a core nothing else wants: on a busy machine it would slow
    the very job it waits for, on the embedded backend on this machine (a 0.37 s GEPA job took 0.46 s beside
    it at load 1 on two cores, and so ran 25% longer than its estimate)."""
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

    Rebuilding the figure each time cost about twice as much (axes, ticks and text layout dominate). A live
    frame (``draw(..., live=True)``) goes further: limits grow with headroom, so they change rarely; the
    figure without its lines (axes, ticks, labels, legend) is rendered only when they do and kept as a
    background, and each frame restores it, draws just the lines onto it (blitting) and encodes the PNG fast.
    """

    def __init__(self, spec: ChartSpec, title: str, figsize: tuple[float, float], dpi: int, *,
                 transparent: bool = True) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator

        self.spec, self.dpi, self.transparent = spec, dpi, transparent
        self.fig = Figure(figsize=figsize, dpi=dpi)
        self.canvas = FigureCanvasAgg(self.fig)
        self.ax = self.fig.add_subplot(1, 1, 1)
        if transparent:  # what ``savefig(transparent=True)`` does, kept for the blitted frames too
            for patch in (self.fig.patch, self.ax.patch):
                patch.set_facecolor("none")
                patch.set_edgecolor("none")
        # a fixed title position: nothing sits above the axes, so matplotlib need not look for overlaps each draw
        self.ax.set_title(title, fontsize=10, y=1.0)
        self.ax.set_xlabel(spec.xlabel)
        self.ax.set_ylabel(spec.ylabel)
        self.ax.grid(True, alpha=0.3)
        self.ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps, trials and rollouts are counts
        # fixed margins: tight_layout measured ~50 ms per redraw, a third of the budget; the legend sits
        # right of the axes, so it never hides the newest points or the markers at the right edge
        self.fig.subplots_adjust(left=0.09, right=0.66, top=0.9, bottom=0.17)
        self.waiting = self.fig.text(0.5, 0.5, spec.waiting_text(), ha="center", va="center", color="0.3")
        self.lines: dict[str, Any] = {}
        self.refs: dict[str, Any] = {}
        self.legend_key: tuple[Any, ...] = ()
        self._live_limits: tuple[tuple[float, float], tuple[float, float]] | None = None
        #: live frames since the x limits last grew: data outgrowing them again soon grows them more
        self._frames_since_growth = 0
        self._background: tuple[tuple[Any, ...], Any] | None = None

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
             xlabel: str | None = None, *, live: bool = False) -> bytes:
        """Set each series' points and the reference scores; return the figure as PNG bytes.

        ``live``: limits with headroom and a blitted, quickly compressed frame (see the class); otherwise
        limits fit the data exactly and the whole figure is rendered (the final frame, a file).
        """
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
        # the legend copies each line's look when made: a line losing its markers (30 points) makes a new one
        markers = tuple(line.get_marker() for line in self.lines.values())
        key = (tuple(self.lines), markers, tuple((r.key, round(v, 3)) for r, v in references))
        if key != self.legend_key and not empty:
            self.ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False,
                           borderaxespad=0.0)
            self.legend_key = key
        if live and not empty:
            return self._blit(series, references, right_edge)
        self._set_animated(False)
        self._background, self._live_limits = None, None
        self.ax.set_autoscale_on(True)
        self.ax.relim()
        self.ax.autoscale_view()
        out = io.BytesIO()
        self.fig.savefig(out, format="png", dpi=self.dpi, transparent=self.transparent)
        return out.getvalue()

    def _set_animated(self, animated: bool) -> list[Any]:
        artists = [*self.lines.values(), *self.refs.values()]
        for artist in artists:
            if artist.get_animated() != animated:
                artist.set_animated(animated)
        return artists

    def _blit(self, series: list[tuple[SeriesSpec, Any, Any]], references: list[tuple[ReferenceSpec, float]],
              right_edge: float) -> bytes:
        """A live frame: the kept background (re-rendered only when what it shows changed) plus the lines."""
        limits = self._grow_limits(series, references, right_edge)
        artists = self._set_animated(True)
        key = (limits, self.legend_key, self.ax.get_xlabel())
        if self._background is None or self._background[0] != key:
            self.ax.set_xlim(*limits[0])
            self.ax.set_ylim(*limits[1])
            self.canvas.draw()  # animated artists (the lines) are left out
            self._background = (key, self.canvas.copy_from_bbox(self.fig.bbox))
        else:
            self.canvas.restore_region(self._background[1])
        for artist in artists:
            self.ax.draw_artist(artist)
        return _fast_png(self.canvas)

    def _grow_limits(self, series: list[tuple[SeriesSpec, Any, Any]], references: list[tuple[ReferenceSpec, float]],
                     right_edge: float) -> tuple[tuple[float, float], tuple[float, float]]:
        """Live limits that hold every point and change rarely: x doubles its span when the data passes the
        right end (quadruples it when that happens again within a few frames: a fast job); y grows by half its span beyond the data when a value falls outside."""
        import numpy as np

        xs = [float(dx[0]) for _, dx, _ in series if len(dx)] + [float(dx[-1]) for _, dx, _ in series if len(dx)]
        if any(r.when != "during" for r, _ in references):
            xs.append(right_edge)
        ys = [float(np.nanmin(dy)) for _, _, dy in series if len(dy)]
        ys += [float(np.nanmax(dy)) for _, _, dy in series if len(dy)]
        ys = [v for v in [*ys, *(value for _, value in references)] if math.isfinite(v)]
        x0, x1 = (min(xs), max(xs)) if xs else (0.0, 1.0)
        y0, y1 = (min(ys), max(ys)) if ys else (0.0, 1.0)
        if y1 - y0 < 1e-9 * max(1.0, abs(y0)):  # one value so far: a span around it
            y0, y1 = y0 - max(0.05 * abs(y0), 0.05), y1 + max(0.05 * abs(y1), 0.05)
        if self._live_limits is None:
            pad = 0.1 * (y1 - y0)
            (lx0, lx1), (ly0, ly1) = (x0, x0 + 2 * max(x1 - x0, 1.0)), (y0 - pad, y1 + pad)
        else:
            (lx0, lx1), (ly0, ly1) = self._live_limits
            self._frames_since_growth += 1
            if x0 < lx0 or x1 > lx1:
                lx0 = min(lx0, x0)
                lx1 = lx0 + (4 if self._frames_since_growth < _FAST_GROWTH_FRAMES else 2) * max(x1 - lx0, 1.0)
                self._frames_since_growth = 0
            if y0 < ly0 or y1 > ly1:
                pad = 0.5 * (max(ly1, y1) - min(ly0, y0))
                ly0, ly1 = (y0 - pad if y0 < ly0 else ly0), (y1 + pad if y1 > ly1 else ly1)
        self._live_limits = ((lx0, lx1), (ly0, ly1))
        return self._live_limits


def _fast_png(canvas: Any) -> bytes:
    """The canvas as an RGBA PNG without row filters, lightly compressed: a live frame is replaced within
    seconds, so encoding speed matters more than a few KB. Pillow tries every row filter on every row,
    which cost three times the rest of a live frame; the final, saved frame uses matplotlib's encoder."""
    import numpy as np

    width, height = canvas.get_width_height(physical=True)
    rows = np.zeros((height, 1 + 4 * width), dtype=np.uint8)  # each row: filter type 0 (none), then pixels
    rows[:, 1:] = np.asarray(canvas.buffer_rgba()).reshape(height, 4 * width)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA, no interlace
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
            + _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), 1)) + _png_chunk(b"IEND", b""))


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def chart_png(data: ChartData, title: str, *, figsize: tuple[float, float] = (8.4, 3.6),
              dpi: int = 110) -> bytes | None:
    """``data`` drawn once as PNG bytes on white (a file is seen outside the notebook's theme); None when no
    series has a point."""
    series = downsampled_series(data)
    if not series:
        return None
    canvas = ChartCanvas(data.spec, title, figsize, dpi, transparent=False)
    return canvas.draw(series, data.reference_values(), data.xlabel())
