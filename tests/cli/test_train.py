"""``synth-nb train``: discovery, --dry-run previews (text and JSON), errors with exit code 2, submission."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from minimal_configs import MINIMAL_GEPA, MINIMAL_SFT

from synth_nb.cli.main import main

SYNTH_KEY = "sk_synth_CANARY_cli_aaaaaaaa_1111"
ENV_KEY = "sk_env_CANARY_cli_bbbbbbbbbb_2222"

GEPA = MINIMAL_GEPA
SFT = MINIMAL_SFT

LINE = '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n'


@pytest.fixture()
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SDK_EXPERIMENTAL", "ENVIRONMENT_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SYNTH_API_KEY", SYNTH_KEY)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _no_canary(*texts: str) -> None:
    for text in texts:
        assert SYNTH_KEY not in text and ENV_KEY not in text


def test_dry_run_prints_masked_human_preview(workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "gepa.toml").write_text(GEPA)
    (workdir / ".env").write_text(f"ENVIRONMENT_API_KEY={ENV_KEY}\n")
    assert main(["train", "--config", "gepa.toml", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    _no_canary(out, err)
    assert "flow:      prompt_learning (gepa)" in out
    assert "backend:   https://agent-learning.onrender.com/api" in out
    assert "ENVIRONMENT_API_KEY = ••••2222  (from .env:" in out
    assert '"task_app_api_key": "••••2222"' in out
    assert "POST /prompt-learning/online/jobs" in out and "nothing was sent" in out


def test_dry_run_json_is_the_public_plan_document(workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ENVIRONMENT_API_KEY", ENV_KEY)
    (workdir / "gepa.toml").write_text(GEPA)
    (workdir / "sft.toml").write_text(SFT)
    (workdir / "train.jsonl").write_text(LINE * 3)
    assert main(["train", "-c", "gepa.toml", "--dry-run", "--json", "--backend", "http://localhost:8000"]) == 0
    out, err = capsys.readouterr()
    _no_canary(out, err)
    doc = json.loads(out)
    assert set(doc) == {"flow", "algorithm", "steps"}
    assert doc["flow"] == "prompt_learning" and doc["algorithm"] == "gepa"
    (step,) = doc["steps"]
    assert set(step) == {"method", "path", "body"}
    assert step["body"]["metadata"] == {"backend_base_url": "http://localhost:8000/api"}
    assert main(["train", "-c", "gepa.toml", "-c", "sft.toml", "--dry-run", "--json", "--examples", "2"]) == 0
    out, err = capsys.readouterr()
    docs = json.loads(out)
    assert [d["flow"] for d in docs] == ["prompt_learning", "sft"]
    assert [s["path"] for s in docs[1]["steps"]] == ["/files", "/learning/jobs", "/learning/jobs/{job_id}/start"]
    assert "--examples is ignored for prompt learning" in err  # warnings go to stderr in JSON mode


def test_discovery_uses_the_only_config_and_lists_several(workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ENVIRONMENT_API_KEY", ENV_KEY)
    (workdir / "configs").mkdir()
    (workdir / "configs" / "gepa.toml").write_text(GEPA)
    (workdir / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert main(["train", "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["flow"] == "prompt_learning"
    (workdir / "sft.toml").write_text(SFT)
    (workdir / "train.jsonl").write_text(LINE)
    assert main(["train", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "2 training configs found" in err and "(all valid)" in err and "--config" in err
    assert "[prompt_learning/gepa] configs/gepa.toml  (valid)" in err and "[sft] sft.toml  (valid)" in err


@pytest.mark.parametrize(("files", "argv", "expected"), [
    ({"bad.toml": "[prompt_learning\nalgorithm = 'gepa'\n"}, ["-c", "bad.toml"], "bad.toml:1"),
    ({"sft.toml": SFT}, ["-c", "sft.toml"], "dataset file not found"),
    ({"sft.toml": SFT, "train.jsonl": LINE + "{oops\n"}, ["-c", "sft.toml"], "train.jsonl:2"),
    ({"sft.toml": SFT, "train.jsonl": b"\xff\xfe\n"}, ["-c", "sft.toml"], "not valid UTF-8"),
    ({"sft.toml": SFT, "train.jsonl": LINE, ".env": "SYNTH_API_KEY oops\n"}, ["-c", "sft.toml"], ".env:1"),
    ({"sft.toml": SFT, "train.jsonl": LINE}, ["-c", "sft.toml", "--examples", "0"], "--examples"),
    ({"sft.toml": SFT, "train.jsonl": LINE}, ["-c", "sft.toml", "-c", "sft.toml", "--idempotency", "k"],
     "reused by 2 jobs"),
    ({"gepa.toml": GEPA}, ["-c", "gepa.toml"], "missing required key ENVIRONMENT_API_KEY"),
    ({"sft.toml": SFT, "train.jsonl": LINE}, ["-c", "sft.toml", "--model", "ft:Qwen/Qwen3-4B:x"], "--model"),
    ({"notes.toml": "[tool]\nx = 1\n"}, ["-c", "notes.toml"], "notes.toml"),
])
def test_bad_input_exits_2_with_an_actionable_message(workdir: Path, capsys: pytest.CaptureFixture[str],
                                                      files: dict[str, Any], argv: list[str], expected: str) -> None:
    for name, content in files.items():
        target = workdir / name
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    assert main(["train", *argv, "--dry-run"]) == 2
    out, err = capsys.readouterr()
    assert expected in err and "Traceback" not in err
    _no_canary(out, err)


def test_json_without_dry_run_is_rejected(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "gepa.toml").write_text(GEPA)
    assert main(["train", "-c", "gepa.toml", "--json"]) == 2
    assert "--json only applies to --dry-run" in capsys.readouterr().err


def test_submission_hands_plans_to_the_runner(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import synth_nb.cli.follow as follow

    seen: dict[str, Any] = {}

    def fake_run_submit(batch: Any, options: Any, **_: Any) -> int:
        seen.update(plans=batch.plans, backend_url=batch.target.url, api_key=batch.key, poll=options.poll)
        return 0

    monkeypatch.setattr(follow, "run_submit", fake_run_submit)
    (workdir / "sft.toml").write_text(SFT)
    (workdir / "train.jsonl").write_text(LINE)
    assert main(["train", "-c", "sft.toml", "--backend", "http://127.0.0.1:9/", "--no-poll"]) == 0
    assert [p.flow for p in seen["plans"]] == ["sft"]
    assert seen["backend_url"] == "http://127.0.0.1:9/api" and seen["api_key"] == SYNTH_KEY
    assert seen["poll"] is False


def test_subprocess_dry_run_json(workdir: Path) -> None:
    (workdir / "sft.toml").write_text(SFT)
    (workdir / "train.jsonl").write_text(LINE)
    env = {**os.environ, "SYNTH_API_KEY": SYNTH_KEY}
    proc = subprocess.run([sys.executable, "-m", "synth_nb.cli.main", "train", "-c", "sft.toml", "--dry-run",
                           "--json"], cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["flow"] == "sft" and doc["steps"][1]["body"]["model"] == "Qwen/Qwen3-0.6B"
    _no_canary(proc.stdout, proc.stderr)


def test_human_preview_json_is_valid_and_keeps_seed_lists_on_one_line() -> None:
    from synth_nb.cli.train import _pretty

    value = {"a": [1, 2, 3], "b": {"c": [{"d": "x"}], "e": []}, "f": ["long text " * 20], "g": {}}
    text = _pretty(value)
    assert json.loads(text) == value
    assert '"a": [1, 2, 3]' in text


def test_backend_local_finds_the_shared_backend_plans_and_leaves_it_running(
        workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import synth_nb.cli.follow as follow
    import synth_nb.local.shared as shared

    events: list[str] = []

    class FakeShared:
        url = "http://127.0.0.1:5555"
        api_key = "sk_local_backend_key_0000"
        task_app_key = None
        started = False

        def task_app_url(self, name: str) -> str:
            return f"{self.url}/task-apps/{name}"

        def stop(self) -> None:
            events.append("stopped")

    def fake_run_submit(batch: Any, options: Any, **_: Any) -> int:
        events.append(f"{batch.plans[0].backend_url} {batch.target.url} {batch.key}")
        return 0

    monkeypatch.setattr(shared, "ensure_backend", lambda folder, **_: FakeShared())
    monkeypatch.setattr(follow, "run_submit", fake_run_submit)
    monkeypatch.setenv("SYNTH_API_KEY", "sk_hosted_key_meant_elsewhere_9999")  # never sent to the embedded one
    (workdir / "sft.toml").write_text(SFT)
    (workdir / "train.jsonl").write_text(LINE * 4)
    assert main(["train", "-c", "sft.toml", "--backend", "local", "--no-poll"]) == 0
    # the shared backend keeps running after the command, for `synth-nb attach` and the next kernel
    assert events == ["http://127.0.0.1:5555/api http://127.0.0.1:5555/api sk_local_backend_key_0000"]
