"""A flag that does not apply to the flow or the action says so: a usage error (exit 2; the magic's UsageError)
before anything is sent, or, where synth-ai 0.2.24 accepted and ignored it, one warning line naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from minimal_configs import MINIMAL_GEPA, MINIMAL_RL, MINIMAL_SFT
from shared_fixtures import run_magic

from synth_nb.cli.main import main

BACKEND = "http://127.0.0.1:9"  # nothing listens: nothing here may be sent


@pytest.fixture()
def configs(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SYNTH_API_KEY", "sk_test_flags_0123456789abcdef")
    (folder / "sft.toml").write_text(MINIMAL_SFT)
    (folder / "train.jsonl").write_text(json.dumps({"messages": [{"role": "user", "content": "hi"},
                                                                  {"role": "assistant", "content": "hello"}]}) + "\n")
    (folder / "rl.toml").write_text(MINIMAL_RL)
    (folder / "gepa.toml").write_text(MINIMAL_GEPA)
    return folder


@pytest.mark.parametrize(("args", "said"), [
    (["sft.toml", "--rollout-budget", "5"],
     "--rollout-budget applies to prompt learning configs only, and changes nothing in sft.toml (sft): drop it"),
    (["sft.toml", "--iterations", "3"], "--iterations applies to prompt learning configs only"),
    (["gepa.toml", "--max-minutes", "2", "--no-poll"],
     "--max-minutes acts only while a job is followed, and --no-poll follows nothing"),
    (["sft.toml", "--stop-on-plateau", "3", "--max-tokens", "9", "--no-poll"],
     "--max-tokens, --stop-on-plateau act only while a job is followed"),
    (["sft.toml", "--record", "x.jsonl", "--no-poll"], "--record acts only while a job is followed"),
    (["rl.toml", "--max-rollouts", "10", "--no-poll"],
     "--max-rollouts is a watchdog limit for RL jobs (their request has no rollout cap), and --no-poll follows nothing"),
    (["sft.toml", "--out", "x.toml"], "--out is only used with --fork JOB_ID"),
])
def test_a_flag_that_would_do_nothing_is_a_usage_error(configs: Path, args: list[str], said: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", *args, "--backend", BACKEND, "--dry-run"]) == 2
    out, err = capsys.readouterr()
    assert said in err and not out
    assert main(["train", *args, "--backend", BACKEND, "--yes"]) == 2  # refused before anything is sent
    assert said in capsys.readouterr().err and not (configs / ".synth_nb" / "jobs.json").exists()


def test_flags_that_apply_are_taken(configs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # sent with a prompt-learning job, --max-rollouts acts without anyone following it
    assert main(["train", "gepa.toml", "--max-rollouts", "10", "--no-poll", "--backend", BACKEND, "--dry-run",
                 "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["steps"][0]["body"]["config_body"]["prompt_learning"]["termination_config"]["max_rollouts"] == 10
    # one config of several honours the flag: the others are said to ignore it, nothing is refused
    assert main(["train", "gepa.toml", "sft.toml", "--rollout-budget", "5", "--backend", BACKEND, "--dry-run"]) == 0
    assert "--rollout-budget is ignored for SFT jobs" in capsys.readouterr().out


def test_a_flag_0_2_24_accepted_and_ignored_is_one_warning_line(configs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "sft.toml", "--stream-format", "chart", "--no-poll", "--backend", BACKEND, "--dry-run"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "--stream-format" in line]
    assert lines == ["warning: --stream-format chart is ignored with --no-poll: no job is followed, so nothing is "
                     "drawn"]


def test_the_magic_refuses_them_too(configs: Path) -> None:
    with pytest.raises(UsageError, match="--rollout-budget applies to prompt learning configs only"):
        run_magic(configs, f"-c sft.toml --rollout-budget 5 --backend {BACKEND} --dry-run")
    with pytest.raises(UsageError, match="--max-tokens acts only while a job is followed"):
        run_magic(configs, f"-c sft.toml --max-tokens 5 --no-poll --backend {BACKEND} --yes")
