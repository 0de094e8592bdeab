"""The comparison chart: one panel per flow chart (score, loss, reward), every run overlaid on it.

Each run keeps one colour and one marker in every panel (ten colours by seven markers: no two of the first
seventy runs look alike), and the legend, outside the panels at the size of the axis labels, names it by
config file and job id. In a panel the headline series is drawn twice, each point faint and the best so far
solid, with the run's marker on it; the flow's other series (validation loss, eval reward) are dashed. The x
axis is linear, logarithmic (runs of very different lengths: a 60,000-rollout run next to 1,000-rollout
ones) or each run's own fraction (0 its start, 1 its end), and its label says which. Drawn with
matplotlib's Agg canvas straight to PNG bytes (no pyplot state), like the monitor chart, so it works
headless, in a worker thread, under any backend.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any, Literal

from synth_nb.comparison.curves import AXES, Axis, Curve
from synth_nb.comparison.runs import Run

__all__ = ["COLORS", "MARKERS", "SCALES", "Scale", "chart_figure", "chart_png", "missing_from", "run_style",
           "scale_for", "x_label"]

#: matplotlib's qualitative "tab10"; a run's colour is paired with a marker (``run_style``)
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22")
#: seven markers: 7 and 10 share no factor, so run i's (colour, marker) pair repeats only after 70 runs
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
Scale = Literal["linear", "log", "fraction"]
SCALES: dict[Scale, str] = {"linear": "linear", "log": "logarithmic (runs of very different lengths)",
                            "fraction": "each run's own fraction: 0 its start, 1 its end"}
#: with "auto", the x axis is logarithmic when the longest run is this many times the shortest
LOG_RATIO = 20
#: at most this many points of one curve are drawn (evenly thinned; the best-so-far line keeps its shape)
MAX_POINTS = 2000
#: markers on a run's best-so-far line, so a run is told by its marker where colours are close
MARKS_PER_LINE = 8
LEGEND_TITLE = "solid: best so far\nfaint: each point\ndashed: validation / eval"
FONT = 9


def run_style(index: int) -> tuple[str, str]:
    """The colour and marker of the ``index``-th run."""
    return COLORS[index % len(COLORS)], MARKERS[index % len(MARKERS)]


def _thin(x: list[float], y: list[float]) -> tuple[list[float], list[float]]:
    if len(x) <= MAX_POINTS:
        return x, y
    step = len(x) / MAX_POINTS
    idx = sorted({int(i * step) for i in range(MAX_POINTS)} | {len(x) - 1})
    return [x[i] for i in idx], [y[i] for i in idx]


def missing_from(curves: Sequence[Curve], runs: Sequence[Run], axis: Axis) -> list[Run]:
    """Runs with no point on ``axis`` (an SFT run has no rollouts; a point without a time has no seconds)."""
    placed = {id(c.run) for c in curves if c.raw.on(axis)[0]}
    return [r for r in runs if id(r) not in placed]


def _spans(curves: Sequence[Curve], axis: Axis) -> dict[int, float]:
    """Per run (by ``id``): the largest x any of its curves reaches on ``axis``."""
    spans: dict[int, float] = {}
    for curve in curves:
        xs = curve.raw.on(axis)[0]
        if xs:
            spans[id(curve.run)] = max(spans.get(id(curve.run), 0.0), max(xs))
    return spans


def scale_for(curves: Sequence[Curve], axis: Axis) -> Scale:
    """``auto``'s choice: logarithmic when the runs' lengths on ``axis`` differ ``LOG_RATIO`` times or more."""
    spans = [s for s in _spans(curves, axis).values() if s > 0]
    return "log" if len(spans) > 1 and max(spans) >= LOG_RATIO * min(spans) else "linear"


def x_label(axis: Axis, scale: Scale) -> str:
    """What the x axis measures, and how it is scaled."""
    if scale == "fraction":
        return f"fraction of each run's {AXES[axis]} (0 = its start, 1 = its end)"
    return f"{AXES[axis]}, log scale" if scale == "log" else AXES[axis]


def _draw(ax: Any, curve: Curve, axis: Axis, style: tuple[str, str], label: str | None, span: float) -> None:
    color, marker = style
    x, y = _thin(*curve.raw.on(axis))
    if span:  # "fraction": each run against its own end
        x = [v / span for v in x]
    if not curve.primary:
        ax.plot(x, y, linestyle="--", linewidth=1.0, color=color, alpha=0.8)
        return
    ax.plot(x, y, linestyle="none" if curve.style == "points" else "-", marker=".", markersize=3, linewidth=0.8,
            alpha=0.35, color=color)
    bx, by = _thin(*curve.best.on(axis))
    if span:
        bx = [v / span for v in bx]
    if bx:
        every = max(1, len(bx) // MARKS_PER_LINE)
        ax.step(bx, by, where="post", color=color, linewidth=1.8, marker=marker, markersize=5, markevery=every,
                label=label)


def chart_figure(curves: Sequence[Curve], runs: Sequence[Run], axis: Axis, *, scale: Scale = "linear",
                 dpi: int = 72) -> Any:
    """The overlaid curves on ``axis`` as a matplotlib ``Figure``; None when no run has a point on it."""
    from matplotlib.figure import Figure

    panels = list(dict.fromkeys(c.chart for c in curves if c.raw.on(axis)[0]))
    if not panels:
        return None
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    labels = [r.label for r in runs]
    legend_width = 0.5 + 0.07 * max(26, *(len(label) + 4 for label in labels))
    fig = Figure(figsize=(4.6 * cols + legend_width, max(3.4 * rows, 0.2 * len(runs) + 1.2)), dpi=dpi,
                 layout="constrained")
    style = {id(r): run_style(i) for i, r in enumerate(runs)}
    spans = _spans(curves, axis) if scale == "fraction" else {}
    labelled: set[int] = set()
    for n, panel in enumerate(panels):
        ax = fig.add_subplot(rows, cols, n + 1)
        for curve in (c for c in curves if c.chart == panel):
            first = curve.primary and id(curve.run) not in labelled
            labelled |= {id(curve.run)} if first else set()
            _draw(ax, curve, axis, style[id(curve.run)], curve.run.label if first else None,
                  spans.get(id(curve.run), 0.0))
        if scale == "log":
            ax.set_xscale("symlog", linthresh=1)  # a run's first point may sit at 0
        ax.set_title(panel, fontsize=FONT + 1)
        ax.set_xlabel(x_label(axis, scale), fontsize=FONT)
        ax.tick_params(labelsize=FONT - 1)
        ax.grid(alpha=0.25)
    handles = [line for ax in fig.axes for line in ax.get_lines() if not str(line.get_label()).startswith("_")]
    fig.legend(handles=handles, labels=[str(h.get_label()) for h in handles], loc="outside right upper",
               fontsize=FONT, frameon=False, title=LEGEND_TITLE, title_fontsize=FONT - 1, alignment="left")
    return fig


def chart_png(curves: Sequence[Curve], runs: Sequence[Run], axis: Axis, *, scale: Scale = "linear",
              dpi: int = 72) -> bytes | None:
    """The overlaid curves on ``axis`` as PNG; None when no run has a point on it."""
    fig = chart_figure(curves, runs, axis, scale=scale, dpi=dpi)
    if fig is None:
        return None
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return _palette(buf.getvalue())


def _palette(png: bytes) -> bytes:
    """The PNG with at most 64 colours: a line chart looks the same at a third of the bytes (saved notebooks)."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        small = image.convert("RGB").quantize(colors=64)
        out = io.BytesIO()
        small.save(out, format="PNG", optimize=True)
    return out.getvalue()
