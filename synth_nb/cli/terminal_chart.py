"""Curves drawn in a terminal with plotext: the live chart panels (``--stream-format chart``) and the curves of
``--compare`` use this one renderer, so both read alike.

Every series gets its own colour (the notebook's, when the flow's chart names one) and its own marker, and
every reference score its own marker in its own colour: the held-out baseline (◆) and the best prompt's
held-out score (*) are told apart without colour too. Steps, trials and rollouts are whole numbers, so the
x axis is labelled with integers. Only the left and bottom axes are drawn: a frame's top line under the
panel's own border read as a second top border. The legend is a list of items packed into as many lines as
the width needs (``packed``), never cut with ``…``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from synth_nb.flows.chart import ChartData

__all__ = ["Mark", "Series", "chart_series", "draw", "legend", "packed", "rgb", "series_marker", "waiting_note"]

#: one marker per series, by its place in the chart (so it never changes while the job runs)
_MARKERS = ("braille", "+", "x", "o", "#", "%", "@", "&")
#: separate measurements (prompt-learning trial scores) as dots: a braille dot alone is barely visible
_POINTS = "dot"
#: how a marker looks in the legend
_GLYPHS = {"braille": "⣿", "dot": "•"}
#: a reference score's marker by its ``ReferenceSpec.marker`` (matplotlib's letters, as the notebook draws it)
_REFERENCE_GLYPHS = {"D": "◆", "*": "*", "o": "o", "s": "■", "^": "▲", "v": "▼"}
_GREY = (128, 128, 128)


@dataclass(frozen=True)
class Series:
    """One curve: its points, colour (RGB, None: the terminal's), marker, and dots rather than a line."""

    label: str
    x: Sequence[float]
    y: Sequence[float]
    color: tuple[int, int, int] | None
    marker: str
    points: bool = False


@dataclass(frozen=True)
class Mark:
    """A reference score: a dashed line across the curves (``across``) or a marker at the right edge."""

    label: str
    value: float
    color: tuple[int, int, int]
    glyph: str
    across: bool


def rgb(color: str | None) -> tuple[int, int, int] | None:
    """``#rrggbb`` or a matplotlib grey level (``"0.35"``) as RGB; None for anything else."""
    if not color:
        return None
    if color.startswith("#") and len(color) == 7:
        try:
            return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)
        except ValueError:
            return None
    try:
        level = float(color)
    except ValueError:
        return None
    # a grey level as the notebook's white background shows it; raised a little so it reads on dark terminals
    value = round(255 * min(1.0, max(0.0, level)) * 0.6 + 64)
    return value, value, value


def series_marker(index: int, points: bool) -> str:
    return _POINTS if points else _MARKERS[index % len(_MARKERS)]


def _ticks(low: float, high: float, width: int) -> list[int]:
    """Whole-number x labels from ``low`` to ``high`` at a round spacing (1, 2, 5, 10, 20, 25, 50…), as many
    as fit ``width`` columns."""
    first, last = math.floor(low), math.ceil(high)
    most = max(2, min(8, width // 12))
    if last - first < most:
        return list(range(first, last + 1))
    rough = (last - first) / (most - 1)
    scale = 10 ** math.floor(math.log10(rough))
    step = next(f * scale for f in (1, 2, 2.5, 5, 10) if f * scale >= rough and (f * scale) % 1 == 0)
    ticks = list(range(math.ceil(first / step) * int(step), last + 1, int(step)))
    if not ticks or ticks[0] - first > step / 2:
        ticks.insert(0, first)
    return ticks


def draw(series: Sequence[Series], marks: Sequence[Mark], width: int, height: int, empty: str) -> str:
    """The curves as text with ANSI colours for a ``width`` × ``height`` cell area; ``empty`` when none has
    a point yet."""
    import plotext as plt

    drawn = [s for s in series if len(s.x)]
    if not drawn:
        return f"\n  {empty}\n"
    plt.clear_figure()
    plt.plotsize(max(width, 30), max(height, 6))
    plt.theme("clear")  # the x label is in the legend: two rows more for the curves
    plt.xaxes(True, False)
    plt.yaxes(True, False)
    for item in drawn:
        xs, ys = _thinned(item.x, item.y, 4 * width)
        if item.points:
            plt.scatter(xs, ys, marker=item.marker, color=item.color)
        else:
            plt.plot(xs, ys, marker=item.marker, color=item.color)
    low = min(float(s.x[0]) for s in drawn)
    high = max(float(s.x[-1]) for s in drawn)
    for mark in marks:
        if mark.across:
            plt.plot([low, high], [mark.value, mark.value], color=mark.color, marker="-")
        else:  # measured after the run (held-out): at the right edge, not a line through the curve
            plt.scatter([high], [mark.value], marker=mark.glyph, color=mark.color)
    plt.xticks(_ticks(low, high, width))
    return str(plt.build()).rstrip("\n")


def _thinned(x: Sequence[float], y: Sequence[float], most: int) -> tuple[list[float], list[float]]:
    """At most ``most`` evenly spaced points, the last kept: a terminal cell holds two braille dots across,
    so 10,000 loss points draw the same curve as 4 per column, at a fraction of plotext's time."""
    if len(x) <= most:
        return list(x), list(y)
    step = len(x) / most
    picked = sorted({int(i * step) for i in range(most)} | {len(x) - 1})
    return [x[i] for i in picked], [y[i] for i in picked]


def legend(series: Sequence[Series], marks: Sequence[Mark], xlabel: str, width: int) -> list[Any]:
    """The legend as lines of rich ``Text``: each series' marker in its colour and its name, each reference
    score's, then what x counts; items are never split, lines as many as ``width`` needs."""
    from rich.text import Text

    items = []
    for item in series:
        if not len(item.x):
            continue
        glyph = _GLYPHS.get(item.marker, item.marker)
        entry = Text()
        entry.append(glyph * 2, style=_style(item.color))
        entry.append(f" {item.label}")
        items.append(entry)
    for mark in marks:
        entry = Text()
        entry.append("--" if mark.across else mark.glyph, style=_style(mark.color))
        entry.append(f" {mark.label} {mark.value:.3f}")
        items.append(entry)
    items.append(Text(f"x: {xlabel}", style="dim"))
    return packed(items, width, "   ")


def _style(color: tuple[int, int, int] | None) -> str:
    return f"rgb({color[0]},{color[1]},{color[2]})" if color else ""


def packed(items: Sequence[Any], width: int, separator: str, style: str = "") -> list[Any]:
    """``items`` (rich ``Text``) joined by ``separator`` into lines of at most ``width`` cells; an item wider
    than a line gets a line of its own, folded."""
    from rich.text import Text

    lines: list[Any] = []
    line = Text(style=style)
    for item in items:
        if line.cell_len and line.cell_len + len(separator) + item.cell_len > width:
            lines.append(line)
            line = Text(style=style)
        if line.cell_len:
            line.append(separator)
        line.append_text(item)
    if line.cell_len or not lines:
        lines.append(line)
    for text in lines:
        text.overflow = "fold"
    return lines


def chart_series(data: ChartData) -> tuple[list[Series], list[Mark]]:
    """A job chart's series (marked by their place in the flow's chart) and reference scores, ready to draw."""
    series = []
    for index, buf in enumerate(data.series.values()):
        x, y = buf.xy()
        points = buf.spec.style == "points"
        series.append(Series(buf.spec.label, x.tolist(), y.tolist(), rgb(buf.spec.color),
                             series_marker(index, points), points))
    marks = [Mark(ref.label, value, rgb(ref.color) or _GREY, _REFERENCE_GLYPHS.get(ref.marker, "*"),
                  ref.when == "during")
             for ref, value in data.reference_values()]
    return series, marks


def waiting_note(data: ChartData) -> str:
    """What an empty chart waits for: its flow's series by name."""
    return data.spec.waiting_text()
