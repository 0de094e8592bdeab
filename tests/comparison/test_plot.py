"""The comparison chart stays readable with many runs of very different lengths.

Eleven prompt-learning runs, one of them 60,000 rollouts long next to runs of about a thousand: each run has a
colour and marker pair of its own, the legend sits outside the panel at the axis labels' size, and the x axis
is logarithmic by itself (or each run's own fraction, when asked), its label saying so.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from synth_nb.comparison import Comparison
from synth_nb.comparison.curves import Curve, Samples
from synth_nb.comparison.plot import FONT, chart_figure
from synth_nb.comparison.runs import Run
from synth_nb.errors import ConfigError


def _many(n: int = 11, long_run: int = 60_000) -> Comparison:
    rnd = random.Random(7)
    runs, curves = [], []
    for i in range(n):
        run = Run(job_id=f"pl_{i:016x}", flow="prompt_learning", algorithm="gepa", status="succeeded", status_doc={},
                  events=[], metrics=[], config_path=Path(f"banking_gepa_seed{i}.toml"))
        total = long_run if i == 3 else rnd.randint(600, 2000)
        raw, best, top = Samples(), Samples(), 0.0
        for k in range(1, 41):
            value = 0.5 + 0.4 * (1 - math.exp(-3 * k / 40)) + rnd.uniform(-0.05, 0.05)
            raw.add(k, total * k / 40, total * k / 400, value)
            if value > top:
                top = value
                best.add(k, total * k / 40, total * k / 400, value)
        runs.append(run)
        curves.append(Curve(run=run, panel="score", label="trial score", higher_is_better=True, raw=raw, best=best,
                            style="points", headline="score", chart="Prompt learning score"))
    return Comparison(runs, curves, [], "rollouts")


def test_eleven_runs_each_have_their_own_colour_and_marker_and_a_full_size_legend_outside() -> None:
    comparison = _many()
    fig = chart_figure(comparison.curves, comparison.runs, "rollouts", scale=comparison.scale_on("rollouts"))
    fig.draw_without_rendering()  # lays the figure out (constrained layout), as saving it does
    [legend] = fig.legends
    handles = legend.legend_handles
    assert [t.get_text() for t in legend.get_texts()] == [r.label for r in comparison.runs]
    styles = {(h.get_color(), h.get_marker()) for h in handles}
    assert len(styles) == len(comparison.runs) == 11
    assert all(t.get_fontsize() >= FONT for t in legend.get_texts())
    [ax] = fig.axes
    renderer = fig._get_renderer()
    assert legend.get_window_extent(renderer).x0 >= ax.get_window_extent(renderer).x1  # beside the panel
    # the long run does not squash the others into the first twentieth of the axis
    assert comparison.scale_on("rollouts") == "log" and ax.get_xscale() == "symlog"
    assert ax.get_xlabel() == "rollouts, log scale"
    png = comparison.png("rollouts")
    assert png is not None and png.startswith(b"\x89PNG")
    assert "rollouts, log scale:" in comparison.to_html()


def test_each_runs_own_fraction_and_a_linear_axis_when_runs_are_alike() -> None:
    comparison = _many().with_scale("fraction")
    fig = chart_figure(comparison.curves, comparison.runs, "rollouts", scale="fraction")
    [ax] = fig.axes
    xs = [x for line in ax.get_lines() for x in line.get_xdata()]
    assert max(xs) == pytest.approx(1.0) and min(xs) > 0
    assert ax.get_xlabel() == "fraction of each run's rollouts (0 = its start, 1 = its end)"
    alike = _many(n=3, long_run=1500)
    assert alike.scale_on("rollouts") == "linear"
    assert chart_figure(alike.curves, alike.runs, "rollouts").axes[0].get_xlabel() == "rollouts"
    with pytest.raises(ConfigError, match="unknown x scale"):
        alike.with_scale("cubic")  # type: ignore[arg-type]
