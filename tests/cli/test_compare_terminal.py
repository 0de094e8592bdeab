"""``synth-nb train --compare`` in tmux at 80×24 and 120×40: the overlaid curves the help promises, drawn by the
live chart's renderer, and tables that fit the width (the columns left out are named).

The runs are real jobs on the embedded backend (``real_runs``): two GEPA runs, a MIPRO run, and an SFT and
an RL run replayed from the bundled recordings.
"""

from __future__ import annotations

import re
import subprocess

import pytest
from real_runs import real_runs
from terminal_session import CLI, WAIT, Pane, clean_env, sizes

from synth_nb.comparison import Comparison, compare
from synth_nb.comparison.render import metric_cell

ORDER = ["gepa_a", "gepa_b", "mipro", "sft", "rl"]


def _compared(ids: list[str], monkeypatch: pytest.MonkeyPatch) -> Comparison:
    monkeypatch.setenv("SYNTH_API_KEY", real_runs().api_key)
    return compare(ids, folder=real_runs().folder)


@sizes
def test_compare_draws_the_curves_and_fits_the_tables(size: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    runs = real_runs()
    ids = [runs.jobs[name].id for name in ORDER]
    env = clean_env(SYNTH_API_KEY=runs.api_key, SYNTH_NB_BACKEND_DIR=str(runs.folder / "unused"))
    pane = Pane("compare", [*CLI, "train", "--compare", *ids], runs.folder, size, env)
    try:
        assert pane.exit_status() == 0
        screen = pane.screen(history=True, joined=True)  # a line wider than the pane comes back whole
    finally:
        pane.close()
    width = size[0]
    lines = screen.split("EXIT=")[0].splitlines()
    assert all(len(line) <= width for line in lines), [line for line in lines if len(line) > width]

    # one panel per flow chart, with its curves and a legend naming every run by number, file and id
    for title in ("Prompt learning score", "SFT loss", "RL reward"):
        assert any(line.startswith("╭") and title in line for line in lines), title
    assert sum("┤" in line for line in lines) >= 3 * 4  # plotted rows with y labels
    compared = _compared(ids, monkeypatch)
    labels = {n: run.label for n, run in enumerate(compared.runs, start=1)}
    legend = {n: line for n, label in labels.items() for line in lines if f"#{n} {label}" in line}
    assert sorted(legend) == [1, 2, 3, 4, 5]
    markers = {re.search(r"│ (\S\S) #", legend[n]).group(1) for n in legend}  # type: ignore[union-attr]
    assert len(markers) == 5  # a marker of its own per run

    # the final-metrics table: every run with its numbers; what was left out, said
    for n, label in labels.items():
        assert any(re.match(rf"{n}\s+{re.escape(label)}\s", line) for line in lines), label
    said = " ".join(lines)
    if width == 80:
        assert "not shown at 80 columns: Duration (s), Tokens" in said
    # each score beside the data it was measured on (cells wrap, never cut), and why each run stopped
    assert "scores, each beside the data it was measured on" in said
    rows = {r["job_id"]: r for r in compared.rows()}
    for n, job_id in enumerate(ids, start=1):
        row = rows[job_id]
        best = rf"{n}\s+{re.escape(metric_cell('final', row['final']))}\s+{re.escape(metric_cell('best', row['best']))}"
        assert any(re.match(rf"{best}\s+{re.escape(row['best_on'][:8])}", line) for line in lines), row
        assert " ".join(row["held_out_on"].split()[:2]) in said, row["held_out_on"]
        first = row["stopped"].split()[:3]
        assert any(re.match(rf"{n}\s+{re.escape(' '.join(first))}", line) for line in lines), row["stopped"]
    assert "config differences (" in said and "runs numbered as above" in said and "keys read from:" in said


def test_off_a_terminal_compare_prints_the_plain_tables() -> None:
    runs = real_runs()
    ids = [runs.jobs[name].id for name in ORDER[:2]]
    env = clean_env(SYNTH_API_KEY=runs.api_key, SYNTH_NB_BACKEND_DIR=str(runs.folder / "unused"))
    done = subprocess.run([*CLI, "train", "--compare", *ids], cwd=runs.folder, env=env, capture_output=True,
                          text=True, timeout=WAIT, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "╭" not in done.stdout and "\x1b[" not in done.stdout
    assert "Final (last value)" in done.stdout and "config differences (2 keys):" in done.stdout
