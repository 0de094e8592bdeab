"""The comparison chart: one panel per flow chart (score, loss, reward), every run overlaid on it.

Each run keeps one colour in every panel, and the legend names it by config file and job id. In a panel
the headline series is drawn twice, each point faint and the best so far solid; the flow's other series
(validation loss, eval reward) are dashed. Drawn with matplotlib's Agg canvas straight to PNG bytes (no
pyplot state), like the monitor chart, so it works headless, in a worker thread, under any backend.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from synth_nb.comparison.curves import AXES, Axis, Curve
from synth_nb.comparison.runs import Run

__all__ = ["COLORS", "chart_png", "missing_from"]

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22")
#: at most this many points of one curve are drawn (evenly thinned; the best-so-far line keeps its shape)
MAX_POINTS = 2000
LEGEND_TITLE = "solid: best so far · faint: each point · dashed: validation / eval"


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


def _draw(ax: Any, curve: Curve, axis: Axis, color: str, label: str | None) -> None:
    x, y = _thin(*curve.raw.on(axis))
    if not curve.primary:
        ax.plot(x, y, linestyle="--", linewidth=1.0, color=color, alpha=0.8)
        return
    ax.plot(x, y, linestyle="none" if curve.style == "points" else "-", marker=".", markersize=3, linewidth=0.8,
            alpha=0.35, color=color)
    bx, by = _thin(*curve.best.on(axis))
    if bx:
        ax.step(bx, by, where="post", color=color, linewidth=1.8, label=label)


def chart_png(curves: Sequence[Curve], runs: Sequence[Run], axis: Axis, *, dpi: int = 72) -> bytes | None:
    """The overlaid curves on ``axis`` as PNG; None when no run has a point on it."""
    from matplotlib.figure import Figure

    panels = list(dict.fromkeys(c.chart for c in curves if c.raw.on(axis)[0]))
    if not panels:
        return None
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    fig = Figure(figsize=(max(6.4, 4.4 * cols), 3.0 * rows + 0.9), dpi=dpi)
    color = {id(r): COLORS[i % len(COLORS)] for i, r in enumerate(runs)}
    labelled: set[int] = set()
    for n, panel in enumerate(panels):
        ax = fig.add_subplot(rows, cols, n + 1)
        for curve in (c for c in curves if c.chart == panel):
            first = curve.primary and id(curve.run) not in labelled
            labelled |= {id(curve.run)} if first else set()
            _draw(ax, curve, axis, color[id(curve.run)], curve.run.label if first else None)
        ax.set_title(panel, fontsize=9)
        ax.set_xlabel(AXES[axis], fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.25)
    handles = [line for ax in fig.axes for line in ax.get_lines() if not str(line.get_label()).startswith("_")]
    ncols = max(1, min(len(handles), cols if cols > 1 else 2))
    fig.set_figheight(fig.get_figheight() + 0.18 * (-(-len(handles) // ncols)))
    fig.subplots_adjust(left=0.08, right=0.98, top=1 - 0.35 / fig.get_figheight(), wspace=0.3, hspace=0.55,
                        bottom=(0.75 + 0.18 * -(-len(handles) // ncols)) / fig.get_figheight())
    fig.legend(handles=handles, labels=[str(h.get_label()) for h in handles], loc="lower center", fontsize=7,
               ncols=ncols, frameon=False, title=LEGEND_TITLE, title_fontsize=7)
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
