"""A job's bundle: written when it ends, everything needed to repeat it, and no secret anywhere in it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from minimal_configs import LOCAL_GEPA, MINIMAL_SFT
from shared_fixtures import ENV_KEY

from synth_nb.cli.main import main

TOML_CANARY = "sk_env_CANARY_written_in_toml_5555"
CHAT = '{"messages": [{"role": "user", "content": "hi %d"}, {"role": "assistant", "content": "hello"}]}\n'


@pytest.fixture()
def replay_backend() -> Iterator[Any]:
    from synth_nb.local import start_backend

    with start_backend(port=0, default_executor="replay", executor_options={"replay": {"speed": 50}}) as b:
        yield b


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def _assert_no_secret(files: dict[str, bytes], *secrets: str) -> None:
    for name, data in files.items():
        for secret in secrets:
            assert secret.encode() not in data, f"{secret[:12]}... found in {name}"


def test_a_prompt_learning_bundle_holds_the_run_and_no_secret(folder: Path, backend: Any, task_app: Any,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
    config = LOCAL_GEPA.format(task_url=task_app.url, budget=24).replace(
        'results_folder = "results"', f'results_folder = "results"\ntask_app_api_key = "{TOML_CANARY}"')
    (folder / "gepa.toml").write_text(config)
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "--dry-run", "--json"]) == 0
    previewed = json.loads(capsys.readouterr().out)
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url]) == 0
    out = capsys.readouterr().out
    job_id = out.split("submitted prompt_learning job ", 1)[1].split()[0]
    bundle = folder / "results" / job_id
    assert f"  bundle:   {bundle}" in out
    files = _files(bundle)
    assert {"run.json", "config.toml", "plan.json", "overrides.json", "datasets.json", "task_app.json",
            "events.jsonl", "metrics.jsonl", "status.json", "README.md", "summary.md"} <= set(files)
    run = json.loads(files["run.json"])
    assert run["job_id"] == job_id and run["status"] == "succeeded" and run["flow"] == "prompt_learning"
    assert run["versions"]["python"].count(".") == 2 and run["versions"]["synth_nb"]
    assert run["config_sha256"] == hashlib.sha256((folder / "gepa.toml").read_bytes()).hexdigest()
    assert json.loads(files["plan.json"]) == previewed
    assert json.loads(files["overrides.json"])["backend"] == f"{backend.url}/api"
    assert json.loads(files["task_app.json"])["route"] == "/info"
    events = [json.loads(line) for line in files["events.jsonl"].splitlines()]
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events) and len(events) > 10
    assert any(e["type"] == "prompt.learning.gepa.complete" for e in events)
    assert len(files["metrics.jsonl"].splitlines()) > 3
    text = files["config.toml"].decode()
    assert 'task_app_api_key = "••••' in text and text.replace(TOML_CANARY, "") == text
    assert "`config.toml`" in files["README.md"].decode() and f"--rerun {job_id}" in files["README.md"].decode()
    report = files["report.html"].decode()  # the job's report shows the config as the bundle keeps it, masked
    assert "`report.html`" in files["README.md"].decode() and f"Report of job {job_id}" in report
    assert "task_app_api_key = &quot;••••" in report and "<summary>plan.json:" in report
    _assert_no_secret(files, ENV_KEY, TOML_CANARY, backend.api_key)  # in every file, the report too


def test_an_sft_bundle_goes_to_the_runs_folder_with_each_datasets_sha256(
        folder: Path, replay_backend: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SYNTH_API_KEY", replay_backend.api_key)
    (folder / "train.jsonl").write_text("".join(CHAT % i for i in range(5)))
    (folder / "sft.toml").write_text(MINIMAL_SFT)
    assert main(["train", "-c", "sft.toml", "--backend", replay_backend.url]) == 0
    out = capsys.readouterr().out
    job_id = out.split("submitted sft job ", 1)[1].split()[0]
    bundle = folder / ".synth_nb" / "runs" / job_id
    files = _files(bundle)
    (dataset,) = json.loads(files["datasets.json"])
    assert dataset["ref"] == "training_file" and dataset["path"] == str(folder / "train.jsonl")
    assert dataset["sha256"] == hashlib.sha256((folder / "train.jsonl").read_bytes()).hexdigest()
    assert "task_app.json" not in files and json.loads(files["status.json"])["status"] == "succeeded"
    _assert_no_secret(files, replay_backend.api_key, ENV_KEY)


def test_a_key_pasted_into_model_is_not_saved_in_the_bundle(folder: Path, backend: Any, task_app: Any,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Prompt learning ignores ``--model`` (a warning says so), so nothing refuses the key before it is saved."""
    pasted = "sk-proj-CANARYpastedIntoModel0123456789"
    monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=24))
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "--model", pasted]) == 0
    out, err = capsys.readouterr()
    job_id = out.split("submitted prompt_learning job ", 1)[1].split()[0]
    files = _files(folder / "results" / job_id)
    assert json.loads(files["overrides.json"])["model"] == "••••6789"
    _assert_no_secret(files, pasted)
    assert pasted not in out + err
