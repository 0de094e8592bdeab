"""``synth-nb train --compare`` on a terminal: the overlaid curves, drawn by the live chart's renderer
(``synth_nb.cli.terminal_chart``), then the tables fitted to the terminal's width.

One panel per flow chart (prompt-learning score, SFT loss, RL reward), every run on it in its own colour and
marker, numbered as in the tables (``#1``…): the headline series, as its best so far where the flow draws
separate measurements (prompt-learning trials), else as it went. The final-metrics table keeps the run, its
final and best values and drops the columns that do not fit, naming them; the config differences use the
run numbers as headings and show as many runs as fit, naming the others. Off a terminal the plain tables of
``Comparison.to_text()`` are printed as before, every column in full. What a cell shows of the backend's
words is made inert.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO

from synth_nb.cli.terminal_chart import Series, draw, legend, rgb, series_marker
from synth_nb.comparison import Comparison
from synth_nb.comparison.curves import AXES, Curve
from synth_nb.comparison.plot import COLORS, missing_from
from synth_nb.comparison.render import COLUMNS, MAX_KEYS, metric_cell
from synth_nb.comparison.table import shown_value
from synth_nb.untrusted import inert

__all__ = ["comparison_view", "print_comparison"]

#: the final-metrics columns dropped first when the table is too wide (the run, final and best never are)
_DROP_ORDER = ("duration_s", "tokens", "rollouts", "steps", "flow", "status", "metric")
_KEEP = ("run", "final", "best")
#: the chart's rows: a third of the terminal, within these bounds
MIN_ROWS, MAX_ROWS = 8, 18
GAP = "  "


def print_comparison(comparison: Comparison, out: TextIO | None = None) -> None:
    """On a terminal the curves and the fitted tables; elsewhere (pipes, files) the plain tables."""
    out = out or sys.stdout
    isatty = getattr(out, "isatty", None)
    if not (callable(isatty) and isatty()):
        print(comparison.to_text(), end="", file=out)
        return
    from rich.console import Console

    console = Console(file=out, highlight=False)
    width, height = console.size
    console.print(comparison_view(comparison, width, height), soft_wrap=False)


def comparison_view(comparison: Comparison, width: int, height: int) -> Any:
    """Everything ``--compare`` shows on a ``width`` × ``height`` terminal, as one rich renderable."""
    from rich.console import Group
    from rich.text import Text

    runs = comparison.runs
    parts: list[Any] = [Text(inert(comparison.title), style="bold")]
    parts += [Text(f"note: {inert(n)}", style="dim") for n in comparison.problems]
    rows = max(MIN_ROWS, min(MAX_ROWS, height // 3))
    parts += [_panel(comparison, chart, width, rows) for chart in _charts(comparison.curves, comparison)]
    missing = missing_from(comparison.curves, runs, comparison.axis)
    if missing and comparison.curves:
        parts.append(Text(f"no curve on this axis: {', '.join(inert(r.label) for r in missing)}", style="dim"))
    parts.append(Text(""))
    parts += [Text(line) for line in _metrics_table(comparison, width)]
    parts += [Text(line) for line in _differences(comparison, width)]
    return Group(*parts)


def _charts(curves: Sequence[Curve], comparison: Comparison) -> list[str]:
    return list(dict.fromkeys(c.chart for c in curves if c.primary and c.raw.on(comparison.axis)[0]))


def _drawn(curve: Curve, axis: Any) -> tuple[list[float], list[float]]:
    """Separate measurements (trial scores) as their best so far, a curve that is a curve as it went."""
    return curve.best.on(axis) if curve.style == "points" else curve.raw.on(axis)


def _panel(comparison: Comparison, chart: str, width: int, rows: int) -> Any:
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    axis = comparison.axis
    number = {id(run): n for n, run in enumerate(comparison.runs, start=1)}
    curves = [c for c in comparison.curves if c.chart == chart and c.primary and c.raw.on(axis)[0]]
    series = []
    for curve in curves:
        n = number[id(curve.run)]
        x, y = _drawn(curve, axis)
        series.append(Series(inert(f"#{n} {curve.run.label}"), x, y, rgb(COLORS[(n - 1) % len(COLORS)]),
                             series_marker(n - 1, False)))
    shown = sorted({("best so far of " if c.style == "points" else "") + c.label for c in curves})
    inner = width - 4
    plot = Text.from_ansi(draw(series, [], inner, rows, "no points"))
    plot.no_wrap, plot.overflow = True, "crop"
    title = inert(f"{chart} · {', '.join(shown)}")
    return Panel(Group(plot, *legend(series, [], AXES[axis], inner)), title=title, border_style="cyan")


def _wrapped(heading: str, width: int) -> list[str]:
    """``heading`` in lines of at most ``width`` characters, broken between words."""
    lines: list[str] = []
    for word in heading.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def _grid(headings: Sequence[str], body: Sequence[Sequence[str]], widths: Sequence[int]) -> list[str]:
    heads = [_wrapped(h, w) for h, w in zip(headings, widths, strict=True)]
    depth = max(len(h) for h in heads)
    lines = [GAP.join(f"{(h[i] if i < len(h) else ''):<{w}}" for h, w in zip(heads, widths, strict=True)).rstrip()
             for i in range(depth)]
    lines.append(GAP.join("-" * w for w in widths))
    lines += [GAP.join(f"{_cut(cell, w):<{w}}" for cell, w in zip(row, widths, strict=True)).rstrip() for row in body]
    return lines


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(0, width - 1)] + "…"


def _natural(heading: str, cells: Sequence[str]) -> int:
    """A column's width: its widest cell, or its heading's longest word (headings wrap between words)."""
    return max([len(word) for word in heading.split()] + [len(c) for c in cells] + [1])


def _roomier(sizes: list[int], headings: Sequence[str], width: int) -> list[int]:
    """``sizes`` widened, a column at a time, where a heading wraps to more than two lines, as long as the
    table still fits ``width``."""
    sizes = list(sizes)
    spare = width - sum(sizes) - len(GAP) * (len(sizes) - 1)
    while spare > 0:
        deep = [i for i, h in enumerate(headings) if len(_wrapped(h, sizes[i])) > 2]
        if not deep:
            break
        sizes[deep[0]] += 1
        spare -= 1
    return sizes


def _metrics_table(comparison: Comparison, width: int) -> list[str]:
    headings = dict(COLUMNS)
    keys = ["#", *(k for k, _ in COLUMNS if k != "reported_best")]  # as the plain text table: the search score is "best"
    cells = [[str(n), *(inert(metric_cell(k, row.get(k))) for k in keys[1:])]
             for n, row in enumerate(comparison.rows(), start=1)]
    head = {"#": "#", **headings}
    dropped: list[str] = []

    def widths() -> list[int]:
        return [_natural(head[k], [r[i] for r in cells]) for i, k in enumerate(keys)]

    def total() -> int:
        return sum(widths()) + len(GAP) * (len(keys) - 1)

    for key in _DROP_ORDER:
        if total() <= width:
            break
        index = keys.index(key)
        dropped.append(head[key])
        keys.pop(index)
        for row in cells:
            row.pop(index)
    sizes = _roomier(widths(), [head[k] for k in keys], width)
    over = sum(sizes) + len(GAP) * (len(keys) - 1) - width
    if over > 0:  # the run's label is cut, never its numbers
        run = keys.index("run")
        sizes[run] = max(12, sizes[run] - over)
    lines = _grid([head[k] for k in keys], cells, sizes)
    if dropped:
        lines.append(f"not shown at {width} columns: {', '.join(dropped)} (a wider terminal shows them; "
                     "synth_nb.compare(...).df has every column)")
    return lines


def _differences(comparison: Comparison, width: int) -> list[str]:
    differences = comparison.differences()
    if not differences:
        return []
    count = len(comparison.runs)
    prefix = _common_prefix([k for k, _ in differences])
    keys = [inert(k[len(prefix):]) for k, _ in differences[:MAX_KEYS]]
    key_width = min(max(len(k) for k in keys), max(20, width * 2 // 5))
    widest = max(len(shown_value(v, 24)) for _, values in differences for v in values)
    value_width = max(8, min(24, widest, (width - key_width) // count - len(GAP)))
    shown = min(count, max(1, (width - key_width) // (value_width + len(GAP))))
    body = [[_cut_front(key, key_width), *(inert(shown_value(v, value_width)) for v in values[:shown])]
            for key, (_, values) in zip(keys, differences, strict=False)]
    under = f", under {inert(prefix)}" if prefix else ""
    lines = ["", f"config differences ({len(differences)} keys{under}; runs numbered as above):"]
    lines += _grid(["key", *(f"#{n}" for n in range(1, shown + 1))], body, [key_width] + [value_width] * shown)
    if shown < count:
        lines.append(f"runs #{shown + 1}–#{count} not shown at {width} columns (Comparison.config_df() has them all)")
    if len(differences) > MAX_KEYS:
        lines.append(f"{len(differences) - MAX_KEYS} more differing keys in Comparison.config_df()")
    return lines


def _common_prefix(keys: Sequence[str]) -> str:
    """The dotted tables every key sits under (``prompt_learning.``), said once above the table."""
    parts = [k.split(".")[:-1] for k in keys]
    common: list[str] = []
    for level in zip(*parts, strict=False):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return "".join(f"{p}." for p in common)


def _cut_front(key: str, width: int) -> str:
    """A dotted key cut at its start (the leaf says most): ``…evaluation.train_seeds``."""
    return key if len(key) <= width else "…" + key[len(key) - width + 1:]
