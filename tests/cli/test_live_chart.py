"""``--stream-format chart`` panels: every series told apart (colour, marker, legend beside the plot) and
the panels sized to the terminal, so an 80x24 terminal shows them whole."""

from __future__ import annotations

import io
import re

from rich.console import Console
from terminal_session import sizes

from synth_nb.cli.live_chart import ChartBoard
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job
from synth_nb.records import Event, MetricPoint

ANSI_FG = re.compile(r"\x1b\[38;2;(\d+);(\d+);(\d+)m")


def _rl_job(job_id: str = "rl_1") -> Job:
    job = Job(job_id, "rl", AsyncSynthClient("http://127.0.0.1:9", "k"), endpoints=get_flow("rl").endpoints)
    for step in range(1, 30):
        job.ingest_metric(MetricPoint(name="train.reward_mean", step=step, value=step / 30))
        if step % 5 == 0:
            job.ingest_metric(MetricPoint(name="eval.reward_mean", step=step, value=step / 40))
    for seq in range(1, 12):
        job.ingest_event(Event(seq=seq, type="rl.train.step", message="a long event message " * 8))
    return job


def _screen(jobs: list[Job], width: int, height: int) -> tuple[str, str]:
    """What the board draws on a ``width`` x ``height`` terminal: (plain text, with ANSI codes)."""
    board = ChartBoard(jobs, [], out=io.StringIO())
    board.console = Console(file=io.StringIO(), force_terminal=True, color_system="truecolor",
                            width=width, height=height, highlight=False)
    with board.console.capture() as captured:
        board.console.print(board._render())
    ansi = captured.get()
    return re.sub(r"\x1b\[[0-9;]*m", "", ansi), ansi


def test_train_and_eval_reward_have_their_own_colour_marker_and_a_legend() -> None:
    plain, ansi = _screen([_rl_job()], 80, 24)
    colours = {tuple(map(int, m)) for m in ANSI_FG.findall(ansi)}
    assert (0x2c, 0xa0, 0x2c) in colours and (0x94, 0x67, 0xbd) in colours  # the notebook's series colours
    (legend,) = [line for line in plain.splitlines() if "mean reward" in line]
    assert "⣿⣿ mean reward" in legend and "++ eval reward" in legend
    chart_rows = [line for line in plain.splitlines() if "┤" in line or "│" in line]
    assert any("+" in row for row in chart_rows)  # the eval series is drawn with its own marker


def test_at_80x24_one_panel_fits_whole() -> None:
    plain, _ = _screen([_rl_job()], 80, 24)
    lines = plain.rstrip("\n").splitlines()
    assert len(lines) <= 24
    assert lines[0].startswith("╭") and lines[-1].startswith("╰")  # top and bottom borders both on screen
    assert all(len(line) <= 80 for line in lines)
    assert any("status" in line for line in lines)


def test_two_jobs_at_80x24_share_the_screen_without_being_cut() -> None:
    plain, _ = _screen([_rl_job("rl_1"), _rl_job("rl_2")], 80, 24)
    lines = plain.rstrip("\n").splitlines()
    assert len(lines) <= 24
    assert sum(line.startswith("╭") for line in lines) == 2 and sum(line.startswith("╰") for line in lines) == 2
    assert sum("status" in line for line in lines) == 2


def _rl_events_only() -> Job:
    """An RL job whose reward events came by the stream while the metrics page has not been read yet."""
    job = Job("rl_ev", "rl", AsyncSynthClient("http://127.0.0.1:9", "k"), endpoints=get_flow("rl").endpoints)
    for step in range(1, 6):
        job.ingest_event(Event(seq=step, type="rl.train.step", message=f"step {step}/40 reward_mean=0.{step}",
                               data={"step": step, "total_steps": 40, "reward_mean": step / 10}))
    return job


@sizes
def test_reward_events_are_drawn_before_the_metrics_come(size: tuple[int, int]) -> None:
    plain, _ = _screen([_rl_events_only()], *size)
    assert "rl.train.step" in plain and "waiting" not in plain
    assert "⣿⣿ mean reward" in plain and "5/40 steps" in plain


@sizes
def test_an_empty_chart_says_what_it_waits_for(size: tuple[int, int]) -> None:
    job = Job("rl_new", "rl", AsyncSynthClient("http://127.0.0.1:9", "k"), endpoints=get_flow("rl").endpoints)
    plain, _ = _screen([job], *size)
    assert "waiting for the first mean reward or eval reward point…" in plain
    assert "waiting for the first metric" not in plain
