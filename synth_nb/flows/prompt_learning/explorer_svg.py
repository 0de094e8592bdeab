"""The Pareto view as inline SVG: one point per candidate, each naming the candidate row it opens.

Plain SVG inside the HTML output, so it survives saving. A point is a ``<g>`` (never an ``<a>``: front
ends that rewrite link targets fail on SVG links, whose ``href`` cannot be set) whose ``<title>`` says what
it is (its tooltip and its accessible name) and whose ``data-target`` names the candidate's row; the
explorer's script makes the points one Tab stop per plot (arrow keys move between them, Enter or Space
opens the prompt). Baseline and best are told apart by shape and a text label, not only by colour.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from synth_nb.flows.prompt_learning.explorer_model import Axis, Exploration
from synth_nb.markup import html_text

__all__ = ["pareto_svg"]

WIDTH, HEIGHT = 380, 250
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 14, 40
AXIS_LABEL = {"length": "prompt length (≈ tokens)", "rollouts": "rollouts spent when found"}


def _step(lo: float, hi: float, count: int, integer: bool) -> float:
    """A round tick step (1, 2, 2.5 or 5 times a power of ten) giving about ``count`` steps over the range."""
    raw = (hi - lo) / count
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * 0.999)
    return max(step, 1.0) if integer else step


def _ticks(lo: float, hi: float, count: int = 5, *, integer: bool = False) -> list[float]:
    """Round values inside ``[lo, hi]`` (as the monitor's matplotlib charts have), about ``count`` steps apart."""
    if hi <= lo:
        return [lo]
    step = _step(lo, hi, count, integer)
    first = math.ceil(lo / step - 1e-9)
    return [round(k * step, 10) for k in range(first, math.floor(hi / step + 1e-9) + 1)]


def _range(values: Sequence[float], *, unit: bool = False) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    if unit and lo >= 0.0 and hi <= 1.0:
        lo, hi = max(0.0, lo - 0.05), min(1.0, hi + 0.05)
    pad = (hi - lo) * 0.08 or max(abs(hi) * 0.1, 1.0)
    return (lo - pad if lo - pad >= 0 or lo < 0 else 0.0), hi + pad  # counts and lengths never go below 0


def _label(value: float, integer: bool, step: float = 0.01) -> str:
    """The tick's value with as many decimals as its step needs (0.025 steps: three)."""
    if integer:
        return f"{value:.0f}"
    decimals = next((d for d in range(7) if abs(round(step, d) - step) < 1e-9), 6)
    return f"{value:.{decimals}f}"


def pareto_svg(ex: Exploration, axis: Axis, anchor: str) -> str:
    """The score-vs-``axis`` scatter with the frontier drawn; points name ``{anchor}-c{index}``, left to right."""
    points = ex.points(axis)
    if not points:
        return ""
    x_lo, x_hi = _range([x for _, x, _ in points])
    y_lo, y_hi = _range([y for _, _, y in points], unit=True)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def sx(x: float) -> float:
        return LEFT + (x - x_lo) / (x_hi - x_lo) * plot_w

    def sy(y: float) -> float:
        return TOP + (1 - (y - y_lo) / (y_hi - y_lo)) * plot_h

    title = f"Score vs {AXIS_LABEL[axis]}"
    parts = [f'<svg class="synth-pareto" role="group" aria-label="{html_text(title)}" viewBox="0 0 {WIDTH} {HEIGHT}" '
             f'width="{WIDTH}" height="{HEIGHT}" xmlns="http://www.w3.org/2000/svg">',
             f'<line class="ax" x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" y2="{TOP + plot_h}"/>',
             f'<line class="ax" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}"/>']
    for t in _ticks(x_lo, x_hi, integer=True):
        parts.append(f'<text class="tick" x="{sx(t):.1f}" y="{TOP + plot_h + 14}" text-anchor="middle">'
                     f'{_label(t, True)}</text>')
    y_ticks = _ticks(y_lo, y_hi)
    y_step = y_ticks[1] - y_ticks[0] if len(y_ticks) > 1 else 0.01
    for t in y_ticks:
        parts.append(f'<text class="tick" x="{LEFT - 4}" y="{sy(t) + 3:.1f}" text-anchor="end">'
                     f'{_label(t, False, y_step)}</text>')
    parts.append(f'<text class="axl" x="{LEFT + plot_w / 2:.0f}" y="{HEIGHT - 6}" text-anchor="middle">'
                 f'{html_text(AXIS_LABEL[axis])}</text>')
    parts.append(f'<text class="axl" transform="translate(12 {TOP + plot_h / 2:.0f}) rotate(-90)" '
                 f'text-anchor="middle">search score (validation)</text>')
    by_index = {c.index: (x, y) for c, x, y in points}
    front = [by_index[i] for i in ex.frontier(axis)]
    if len(front) > 1:
        steps = [front[0]]
        for x, y in front[1:]:
            steps += [(x, steps[-1][1]), (x, y)]
        coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in steps)
        parts.append(f'<polyline class="front" points="{coords}"/>')
    order = {c.index: rank for rank, (c, _, _) in enumerate(sorted(points, key=lambda p: (p[1], -p[2], p[0].index)))}
    for c, x, y in sorted(points, key=lambda p: p[0].index in (ex.baseline, ex.best)):
        parts.append(_point(ex, c.index, sx(x), sy(y), x, y, axis, anchor, c.index in ex.frontier(axis),
                            order[c.index]))
    parts.append("</svg>")
    return "".join(parts)


def _point(ex: Exploration, index: int, px: float, py: float, x: float, y: float, axis: Axis, anchor: str,
           on_front: bool, rank: int) -> str:
    role = "baseline" if index == ex.baseline else "best" if index == ex.best else ""
    what = f"candidate {index}{f' ({role})' if role else ''}: search score {y:.3f}, {x:.0f} " + (
        "tokens" if axis == "length" else "rollouts") + (", on the frontier" if on_front else "")
    if role == "baseline":
        mark = f'<rect class="pt base" x="{px - 5:.1f}" y="{py - 5:.1f}" width="10" height="10"/>'
    elif role == "best":
        mark = (f'<polygon class="pt best" points="{px:.1f},{py - 8:.1f} {px + 7:.1f},{py + 5:.1f} '
                f'{px - 7:.1f},{py + 5:.1f}"/>')
    else:
        mark = f'<circle class="pt{" on" if on_front else ""}" cx="{px:.1f}" cy="{py:.1f}" r="4.5"/>'
    right = px > WIDTH - RIGHT - 60  # near the right edge the label goes to the left of the point
    label = (f'<text class="ptl" x="{px - 8 if right else px + 8:.1f}" y="{py - 6:.1f}" '
             f'text-anchor="{"end" if right else "start"}">{role} #{index}</text>' if role else "")
    return (f'<g class="point" data-candidate="{index}" data-target="{anchor}-c{index}" data-order="{rank}">'
            f"<title>{html_text(what)}</title>{mark}{label}</g>")
