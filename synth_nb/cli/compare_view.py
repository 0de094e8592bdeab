"""``synth-nb train --compare`` on a terminal: the overlaid curves, drawn by the live chart's renderer
(``synth_nb.cli.terminal_chart``), then the tables fitted to the terminal's width.

One panel per flow chart (prompt-learning score, SFT loss, RL reward), every run on it in its own colour and
marker, numbered as in the tables (``#1``…): the headline series, as its best so far where the flow draws
separate measurements (prompt-learning trials), else as it went. The final metrics are three tables, runs
numbered alike: the runs and their progress (the label kept, the columns that do not fit dropped and named), each
score beside the data it was measured on (the search or training data, the held-out data: never one for the
other; the measured-on cells wrap, never cut) and why each run stopped (wrapped). The config differences (of
the submitted plans where known, said above them) use the run numbers as headings and show as many runs as
fit, naming the others. Off a terminal the plain tables of ``Comparison.to_text()`` are printed as before,
every column in full. What a cell shows of the backend's words is made inert.
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
from synth_nb.comparison.table import OTHER_FLOW, shown_value
from synth_nb.untrusted import inert

__all__ = ["comparison_view", "print_comparison"]

#: the final-metrics columns by table: each run and its progress, its scores, why it stopped
_RUN_COLUMNS = ("run", "flow", "status", "metric", "steps", "rollouts", "tokens", "duration_s")
_SCORE_COLUMNS = ("final", "best", "best_on", "held_out", "held_out_on")
#: the run table's columns dropped first when it is too wide (the run never is)
_DROP_ORDER = ("duration_s", "tokens", "rollouts", "steps", "flow", "status", "metric")
#: what ``Comparison.sources()`` says each run's keys were read from, in words
_SOURCES = {"submitted plan": "the submitted plan, flags included", "file": "the config file",
            "backend": "the backend's copy of the config"}
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


def _wrapped(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken between words (a longer word in pieces)."""
    lines: list[str] = []
    for word in text.split():
        while len(word) > width:
            lines.append(word[:width])
            word = word[width:]
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        elif word:
            lines.append(word)
    return lines or [""]


def _grid(headings: Sequence[str], body: Sequence[Sequence[str]], widths: Sequence[int],
          wrap: Sequence[bool] = ()) -> list[str]:
    """Aligned columns; a cell of a ``wrap`` column takes as many lines as its words need, any other is cut."""
    def block(cells: Sequence[list[str]]) -> list[str]:
        depth = max(len(c) for c in cells)
        return [GAP.join(f"{(c[i] if i < len(c) else ''):<{w}}" for c, w in zip(cells, widths, strict=True)).rstrip()
                for i in range(depth)]

    wraps = list(wrap) + [False] * (len(widths) - len(wrap))
    lines = block([_wrapped(h, w) for h, w in zip(headings, widths, strict=True)])
    lines.append(GAP.join("-" * w for w in widths))
    for row in body:
        lines += block([_wrapped(cell, w) if wrapped else [_cut(cell, w)]
                        for cell, w, wrapped in zip(row, widths, wraps, strict=True)])
    return lines


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(0, width - 1)] + "…"


def _natural(heading: str, cells: Sequence[str]) -> int:
    """A column's width: its widest cell, or its heading's longest word (headings wrap between words)."""
    return max([len(word) for word in heading.split()] + [len(c) for c in cells] + [1])


def _narrowest(heading: str, cells: Sequence[str]) -> int:
    """The least width of a column whose cells wrap: its longest word."""
    return max([len(word) for text in (heading, *cells) for word in text.split()] + [1])


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


def _fitted(rows: Sequence[dict[str, Any]], keys: Sequence[str], width: int, drop: Sequence[str] = (),
            wrap: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """The final-metrics columns ``keys`` (and the run number) as a table of at most ``width`` characters, and
    the headings of the columns left out: those in ``drop`` first, in that order, then the cells of ``wrap``
    columns take more lines (never cut), then the run's label is cut, never a number."""
    head = {"#": "#", **dict(COLUMNS)}
    columns = ["#", *keys]
    cells = [[str(n), *(inert(metric_cell(k, row.get(k))) for k in keys)]
             for n, row in enumerate(rows, start=1)]
    dropped: list[str] = []

    def least(i: int, key: str) -> int:
        texts = [r[i] for r in cells]
        return _narrowest(head[key], texts) if key in wrap else _natural(head[key], texts)

    def total(sizes: Sequence[int]) -> int:
        return sum(sizes) + len(GAP) * (len(sizes) - 1)

    for key in drop:
        if total([least(i, k) for i, k in enumerate(columns)]) <= width:
            break
        index = columns.index(key)
        dropped.append(head[key])
        columns.pop(index)
        for row in cells:
            row.pop(index)
    sizes = _roomier([_natural(head[k], [r[i] for r in cells]) for i, k in enumerate(columns)],
                     [head[k] for k in columns], width)
    floor = {i: least(i, k) for i, k in enumerate(columns) if k in wrap}
    while total(sizes) > width and any(sizes[i] > low for i, low in floor.items()):
        widest = max((i for i in floor if sizes[i] > floor[i]), key=lambda i: sizes[i])
        sizes[widest] -= 1  # the widest wrapping column first, so that they end alike
    over = total(sizes) - width
    if over > 0 and "run" in columns:  # the run's label is cut, never its numbers
        run = columns.index("run")
        sizes[run] = max(12, sizes[run] - over)
    return _grid([head[k] for k in columns], cells, sizes, [k in wrap for k in columns]), dropped


def _metrics_table(comparison: Comparison, width: int) -> list[str]:
    """Three tables, runs numbered alike: each run and its progress (the columns that do not fit left out and
    named), each score beside the data it was measured on, and why each run stopped."""
    rows = comparison.rows()
    lines, dropped = _fitted(rows, _RUN_COLUMNS, width, drop=_DROP_ORDER)
    if dropped:
        lines.append(f"not shown at {width} columns: {', '.join(dropped)} (a wider terminal shows them; "
                     "synth_nb.compare(...).df has every column)")
    lines += ["", "scores, each beside the data it was measured on (runs numbered as above):"]
    lines += _fitted(rows, _SCORE_COLUMNS, width, wrap=("best_on", "held_out_on"))[0]
    lines += [""] + _fitted(rows, ["stopped"], width, wrap=("stopped",))[0]
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
    lines += _wrapped(_read_from(comparison, differences), width)
    lines += _grid(["key", *(f"#{n}" for n in range(1, shown + 1))], body, [key_width] + [value_width] * shown)
    if shown < count:
        left = f"run #{count}" if shown + 1 == count else f"runs #{shown + 1}–#{count}"
        lines.append(f"{left} not shown at {width} columns (Comparison.config_df() has them all)")
    if len(differences) > MAX_KEYS:
        lines.append(f"{len(differences) - MAX_KEYS} more differing keys in Comparison.config_df()")
    return lines


def _read_from(comparison: Comparison, differences: Sequence[tuple[str, list[Any]]]) -> str:
    """What each compared run's keys were read from (its submitted plan, flags included, else its config file or
    the backend's copy), runs of a flow with nothing to compare with left out."""
    compared: dict[str, list[str]] = {}
    for i, source in enumerate(comparison.sources()):
        if any(values[i] != OTHER_FLOW for _, values in differences):
            compared.setdefault(source, []).append(f"#{i + 1}")
    return "keys read from: " + "; ".join(f"{_SOURCES.get(source, inert(source))} ({', '.join(runs)})"
                                          for source, runs in compared.items())


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
