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


@pytest.fixture()
def children() -> Iterator[list[pexpect.spawn]]:
    spawned: list[pexpect.spawn] = []
    yield spawned
    for child in spawned:
        if child.isalive():
            child.terminate(force=True)


def test_config_picker_lists_flow_algorithm_validity_and_takes_several(folder: Path, children: list) -> None:
    child = _spawn(["train", "--dry-run"], folder)
    children.append(child)
    child.expect("Which config")
    child.expect("c_broken.toml")
    screen = child.before + child.after
    child.expect(r"invalid: .*train_seeds")
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
