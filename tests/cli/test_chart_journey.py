"""``--stream-format chart`` read the way a person reads it, in tmux at 80×24 and 120×40: a prompt-learning job
(the bundled GEPA recording, replayed) from its first redraw to its final panel.

What must hold on screen: the legend is whole (every series, both held-out scores and the x axis, wrapped to
more lines rather than cut with ``…``); the held-out baseline and the best prompt's held-out score have
markers and colours of their own; the x axis is labelled with whole numbers; the status line with its ETA
fits the width; the plot draws no frame line under the panel's top border.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from minimal_configs import MINIMAL_GEPA
from terminal_session import CLI, SIZES, Pane, clean_env, replay_backend

SGR = re.compile(r"\x1b\[([0-9;]*)m")
#: the final panel of each size is kept here: the docs show it (docs/_gen/refresh.py copies it into docs/)
KEPT = Path(__file__).resolve().parents[2] / "artifacts" / "terminal"


@pytest.fixture()
def replay() -> Iterator[object]:
    with replay_backend(1) as backend:
        yield backend


def _last_panel(screen: str) -> list[str]:
    lines = screen.splitlines()
    top = max(i for i, line in enumerate(lines) if line.startswith("╭"))
    bottom = next(i for i in range(top, len(lines)) if lines[i].startswith("╰"))
    return lines[top:bottom + 1]


def _legend(panel: list[str]) -> list[str]:
    first = next(i for i, line in enumerate(panel) if "trial score (small batch)" in line and "┤" not in line)
    last = next(i for i in range(first, len(panel)) if "x: " in panel[i])
    return panel[first:last + 1]


def _colour_before(line: str, glyph: str) -> str:
    """The SGR parameters in force where ``glyph`` is drawn on ``line`` (a line captured with colours)."""
    at = line.index(glyph)
    codes = SGR.findall(line[:at])
    return codes[-1] if codes else ""


def test_the_live_chart_reads_whole_at_both_sizes(tmp_path: Path, replay: object) -> None:
    """Both sizes at once, one pane each, on the same replaying backend (the replay is the test's wait)."""
    env = clean_env(SYNTH_API_KEY=replay.api_key, ENVIRONMENT_API_KEY="sk_env_chart_journey_0123456789",  # type: ignore[attr-defined]
                    SYNTH_SKIP_TASK_APP_HEALTH_CHECK="1", COLORTERM="truecolor")
    panes: dict[str, Pane] = {}
    try:
        for label, size in SIZES.items():
            folder = tmp_path / label
            folder.mkdir()
            (folder / "gepa.toml").write_text(MINIMAL_GEPA)
            panes[label] = Pane(f"chart{label}", [*CLI, "train", "-c", "gepa.toml", "--backend",
                                                  replay.url, "--stream-format", "chart", "--yes"],  # type: ignore[attr-defined]
                                folder, size, env)
        # each pane's running screen first (the jobs run side by side), then each one's end
        running = {label: pane.wait_for(lambda text: "ETA" in text and "status running" in text)
                   for label, pane in panes.items()}
        for label, pane in panes.items():
            assert pane.exit_status() == 0
            _check_screens(SIZES[label], running[label], pane.screen(history=True),
                           pane.screen(history=True, colours=True))
    finally:
        for pane in panes.values():
            pane.close()


def _check_screens(size: tuple[int, int], running: str, whole: str, coloured: str) -> None:
    width = size[0]

    # while running: the status line keeps its ETA within the width, whole
    (status,) = [line for line in _last_panel(running) if "status running" in line]
    assert "ETA " in status and "…" not in status and len(status) <= width

    panel = _last_panel(whole)
    assert all(len(line) <= width for line in panel)
    assert not any("┌" in line for line in panel)  # the panel's top border is the only one
    legend = _legend(panel)
    said = " ".join(line.strip("│ ") for line in legend)
    assert "…" not in said
    for item in ("•• trial score (small batch)", "++ best so far", "◆ baseline (held-out)",
                 "* best prompt (held-out)", "x: trial"):
        assert item in said, (item, legend)
    axis = next(i for i, line in enumerate(panel) if "└" in line)
    labels = panel[axis + 1].strip("│ ").split()
    assert labels and all(re.fullmatch(r"\d+", label) for label in labels), panel[axis + 1]
    (final,) = [line for line in panel if "status succeeded" in line]
    assert "…" not in final

    # the two held-out scores in colours of their own (and neither in the terminal's default colour)
    lines = coloured.splitlines()
    baseline = next(line for line in lines if "◆" in line and "baseline (held-out)" in SGR.sub("", line))
    best = next(line for line in lines if "best prompt (held-out)" in SGR.sub("", line))
    best_marker = best[:best.index("best prompt (held-out)")].rindex("*")
    assert _colour_before(baseline, "◆") not in ("", "0", "39")
    assert _colour_before(best[:best_marker + 1], "*") not in ("", "0", "39", _colour_before(baseline, "◆"))
    KEPT.mkdir(parents=True, exist_ok=True)  # only a panel that passed every check above
    (KEPT / f"chart-{size[0]}x{size[1]}.txt").write_text("\n".join(panel) + "\n", encoding="utf-8")
