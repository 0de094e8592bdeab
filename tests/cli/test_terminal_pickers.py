"""``synth-nb train`` on a real pseudo-terminal: the config picker, the .env picker and Ctrl-C at a picker.

Driven with pexpect the way a person types: arrows, space, enter. Off a terminal the same folders give
today's plain errors (exit 2), so CI, pipes and notebooks never wait on a prompt.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from minimal_configs import MINIMAL_GEPA, MINIMAL_SFT
from terminal_session import ESC, Pane, clean_env, replay_backend, sizes, spawn

SYNTH_A = "sk_synth_CANARY_pick_aaaaaaaa_1111"
SYNTH_B = "sk_synth_CANARY_pick_bbbbbbbb_2222"
ENV_KEY = "sk_env_CANARY_pick_cccccccccc_3333"
DOWN, SPACE, ENTER, CTRL_C = "\x1b[B", " ", "\r", "\x03"
CLI = [sys.executable, "-m", "synth_nb"]
WAIT = 90  # generous: the machine may be loaded


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("SYNTH_API_KEY", "ENVIRONMENT_API_KEY", "SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL")}
    env.update(TERM="xterm", COLUMNS="140", LINES="40", PYTHONUNBUFFERED="1")
    return env


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "a_gepa.toml").write_text(MINIMAL_GEPA)
    (tmp_path / "configs" / "b_sft.toml").write_text(MINIMAL_SFT)
    (tmp_path / "configs" / "train.jsonl").write_text(
        '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n')
    (tmp_path / "configs" / "c_broken.toml").write_text(
        MINIMAL_GEPA.replace("train_seeds = [0, 1, 2]", 'train_seeds = "zero"'))
    (tmp_path / ".env").write_text(f"SYNTH_API_KEY={SYNTH_A}\nENVIRONMENT_API_KEY={ENV_KEY}\n")
    return tmp_path


def _spawn(args: list[str], cwd: Path) -> pexpect.spawn:
    child = pexpect.spawn(CLI[0], [*CLI[1:], *args], cwd=str(cwd), env=_env(), encoding="utf-8",
                          dimensions=(40, 140), timeout=WAIT)
    return child


def _escaped_at_the_picker(args: list[str], folder: Path, children: list) -> pexpect.spawn:
    """The command, run in a terminal, left with Esc once its config picker has listed every config."""
    child = _spawn(args, folder)
    children.append(child)
    child.expect("Which config")
    child.expect("c_broken.toml")
    child.send(ESC)
    child.expect(pexpect.EOF)
    child.close()
    return child


def _assert_picked_sft(child: pexpect.spawn) -> None:
    """The dry run went ahead with the SFT config alone, and the command ended with 0."""
    child.expect("dry run: 1 valid plan", timeout=WAIT)
    said = child.before
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "flow:      sft" in said and "flow:      prompt_learning" not in said


def test_config_picker_lists_flow_algorithm_validity_and_takes_several(folder: Path, children: list) -> None:
    child = _spawn(["train", "--dry-run"], folder)
    children.append(child)
    child.expect("Which config")
    child.expect("c_broken.toml")
    screen = child.before + child.after
    child.expect("train_seeds")
    screen += child.before + child.after
    assert "invalid: line 12" in screen
    assert "a_gepa.toml" in screen and "[prompt_learning/gepa]" in screen and "[sft]" in screen
    child.send(SPACE)  # tick a_gepa
    child.send(DOWN)
    child.send(SPACE)  # tick b_sft
    child.send(ENTER)
    child.expect("dry run: 2 valid plan", timeout=WAIT)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert SYNTH_A not in child.before and ENV_KEY not in child.before


def test_enter_with_nothing_ticked_picks_the_highlighted_config(folder: Path, children: list) -> None:
    child = _spawn(["train", "--dry-run"], folder)
    children.append(child)
    child.expect("Which config")
    child.expect("c_broken.toml")
    child.send(DOWN)  # from a_gepa to b_sft
    child.send(ENTER)
    _assert_picked_sft(child)


def test_typing_filters_the_configs_and_enter_takes_the_match(folder: Path, children: list) -> None:
    child = _spawn(["train", "--dry-run"], folder)
    children.append(child)
    child.expect("type to filter")
    child.expect("c_broken.toml")
    child.send("sft")
    child.send(ENTER)
    _assert_picked_sft(child)


def test_esc_at_the_picker_cancels_with_130_and_sends_nothing(folder: Path, children: list) -> None:
    child = _escaped_at_the_picker(["train", "--backend", "http://127.0.0.1:9"], folder, children)
    assert child.exitstatus == 130
    assert "submitted" not in child.before
    assert not (folder / ".synth_nb" / "jobs.jsonl").exists()


def test_job_bundle_copies_are_not_offered(folder: Path, children: list) -> None:
    bundle = folder / "results" / "pl_0123456789abcdef"
    bundle.mkdir(parents=True)
    (bundle / "config.toml").write_text(MINIMAL_GEPA)
    (bundle / "run.json").write_text("{}")
    child = _escaped_at_the_picker(["train", "--dry-run"], folder, children)
    assert "pl_0123456789abcdef" not in child.before + (child.after if isinstance(child.after, str) else "")


def test_ctrl_c_at_the_picker_exits_130_and_sends_nothing(folder: Path, children: list) -> None:
    # a backend URL nobody listens on: if anything were sent the run would fail differently (exit 1)
    child = _spawn(["train", "--backend", "http://127.0.0.1:9"], folder)
    children.append(child)
    child.expect("Which config")
    child.send(CTRL_C)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert "submitted" not in child.before
    assert not (folder / ".synth_nb" / "jobs.jsonl").exists()


def test_env_picker_shows_masked_keys_and_uses_the_chosen_file(folder: Path, children: list) -> None:
    (folder / "configs" / ".env").write_text(f"SYNTH_API_KEY={SYNTH_B}\n")
    child = _spawn(["train", "--config", "configs/a_gepa.toml", "--dry-run"], folder)
    children.append(child)
    child.expect(r"\.env files found")
    child.expect(r"configs/\.env\s+\(SYNTH_API_KEY ••••2222, ENVIRONMENT_API_KEY missing\)")
    child.send(DOWN)  # the first (complete) file is preselected; move to configs/.env
    child.send(ENTER)
    child.expect("dry run: 1 valid plan", timeout=WAIT)
    child.expect(pexpect.EOF)
    out = child.before
    child.close()
    assert child.exitstatus == 0
    assert SYNTH_A not in out and SYNTH_B not in out and ENV_KEY not in out


def test_off_a_terminal_several_configs_is_the_plain_error(folder: Path) -> None:
    proc = subprocess.run([*CLI, "train", "--dry-run"], cwd=folder, env=_env(), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=WAIT)
    assert proc.returncode == 2
    assert "choose one with --config PATH" in proc.stderr


@pytest.fixture()
def replay() -> Iterator[object]:
    with replay_backend(4) as backend:
        yield backend


def _run_in_tmux(commands: dict[str, list[str]], cwd: Path, env: dict[str, str]) -> dict[str, tuple[str, int]]:
    """Run each command in a detached 140×40 tmux pane of its own, side by side; return each one's final screen
    and scrollback size."""
    panes: dict[str, Pane] = {}
    try:
        for session, command in commands.items():
            panes[session] = Pane(session, command, cwd, (140, 40), env)
        return {session: (pane.finished(), pane.history_size()) for session, pane in panes.items()}
    finally:
        for pane in panes.values():
            pane.close()


def test_chart_redraws_in_place_and_leaves_the_final_chart(folder: Path, replay) -> None:
    env = {"SYNTH_API_KEY": replay.api_key, "SYNTH_SKIP_TASK_APP_HEALTH_CHECK": "1", "TERM": "xterm",
           "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(folder))}
    base = [*CLI, "train", "-c", "configs/a_gepa.toml", "--backend", replay.url, "--yes"]
    ran = _run_in_tmux({"chart": [*base, "--stream-format", "chart"], "lines": base}, folder, env)
    (chart, chart_history), (lines, lines_history) = ran["chart"], ran["lines"]
    assert "EXIT=0" in chart and "EXIT=0" in lines
    assert "Final status: succeeded" in chart
    # the final panel stays on screen: its chart, legend and the final status line
    assert "Prompt learning score" in chart and "best so far" in chart and "status succeeded" in chart
    # line output scrolls one line per event; the chart is redrawn in place, so the scrollback stays short
    # (both first print the same preview of what is submitted, which scrolls by once)
    preview = chart.split("1 job → ")[0].count("\n") + 1
    assert preview == lines.split("1 job → ")[0].count("\n") + 1
    assert chart_history - preview < (lines_history - preview) / 2, (chart_history, lines_history, chart)


def test_ctrl_c_during_the_live_chart_cancels_the_job_without_a_traceback(folder: Path, children: list) -> None:
    from synth_nb.local import start_backend

    backend = start_backend(port=0, default_executor="replay", executor_options={"replay": {"speed": 0.5}})
    try:
        env = {**_env(), "SYNTH_API_KEY": backend.api_key, "ENVIRONMENT_API_KEY": ENV_KEY,
               "SYNTH_SKIP_TASK_APP_HEALTH_CHECK": "1"}
        child = pexpect.spawn(CLI[0], [*CLI[1:], "train", "-c", "configs/a_gepa.toml", "--backend", backend.url,
                                       "--stream-format", "chart", "--yes"],
                              cwd=str(folder), env=env, encoding="utf-8", dimensions=(24, 80), timeout=WAIT)
        children.append(child)
        child.expect("status running")
        child.sendintr()
        child.expect("interrupted: asking the backend to cancel")
        child.expect(pexpect.EOF)
        said = child.before
        child.close()
    finally:
        backend.stop()
    assert child.exitstatus == 130
    assert "cancelled" in said
    assert "never retrieved" not in said and "Traceback" not in said


# -- one rule for "a terminal", Esc at the .env picker, no question nobody needs (at 80x24 and 120x40) ------


def _second_env_file(folder: Path) -> None:
    (folder / "configs" / ".env").write_text(f"SYNTH_API_KEY={SYNTH_B}\n")


@sizes
def test_esc_at_the_env_picker_exits_130_and_sends_nothing(folder: Path, children: list, size: tuple[int, int]) -> None:
    _second_env_file(folder)
    child = spawn(["train", "-c", "configs/a_gepa.toml", "--backend", "http://127.0.0.1:9"], folder, size,
                  clean_env(), children)
    child.expect(r"\.env files found")
    child.expect(r"configs/\.env")
    child.send(ESC)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert "submitted" not in child.before and "Submit?" not in child.before
    assert not (folder / ".synth_nb" / "jobs.jsonl").exists()


@sizes
def test_no_env_picker_when_the_run_needs_no_key(folder: Path, children: list, size: tuple[int, int]) -> None:
    # SFT on the embedded backend: every .env row would say "(no keys needed)"
    _second_env_file(folder)
    child = spawn(["train", "-c", "configs/b_sft.toml", "--backend", "local", "--dry-run"], folder, size,
                  clean_env(), children)
    child.expect("dry run: 1 valid plan")
    said = child.before
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert ".env files found" not in said and "no keys needed" not in said


@sizes
def test_a_piped_run_that_needs_the_config_picker_fails_as_off_a_terminal(folder: Path, children: list,
                                                                           size: tuple[int, int]) -> None:
    child = spawn(["train", "--dry-run"], folder, size, clean_env(), children, shell="| tee log.txt")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert "Which config" not in child.before
    assert "choose one with --config PATH" in child.before


@sizes
def test_a_piped_run_asks_nothing_and_reads_the_nearest_env_file(folder: Path, children: list,
                                                                 size: tuple[int, int]) -> None:
    # stdout piped: neither the .env picker nor "Submit?" (the same rule for both), as off a terminal
    _second_env_file(folder)
    child = spawn(["train", "-c", "configs/a_gepa.toml", "--backend", "http://127.0.0.1:9", "--no-poll"], folder,
                  size, clean_env(), children, shell="| tee log.txt")
    child.expect(pexpect.EOF)
    child.close()
    said = child.before
    assert ".env files found" not in said and "Submit?" not in said
    assert "SYNTH_API_KEY ••••2222" in said  # configs/.env, the nearest to the config, as off a terminal
    assert child.exitstatus == 2  # no task app answers: nothing is submitted, as off a terminal
    assert "Nothing was submitted" in said
