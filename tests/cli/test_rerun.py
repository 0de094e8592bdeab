"""``--rerun JOB_ID``: the same plan again from the job's bundle, or the diff and exit 2 with nothing sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from bundle_backend import ENV_KEY
from minimal_configs import LOCAL_GEPA, MINIMAL_SFT
from shared_fixtures import run_magic

from synth_nb.cli.main import main

CHAT = '{"messages": [{"role": "user", "content": "hi %d"}, {"role": "assistant", "content": "hello"}]}\n'


def _submitted(out: str, flow: str) -> str:
    return out.split(f"submitted {flow} job ", 1)[1].split()[0]


def _job_count(backend: Any, path: str) -> int:
    answer = httpx.get(f"{backend.url}/api{path}", headers={"Authorization": f"Bearer {backend.api_key}"}, timeout=30)
    answer.raise_for_status()
    body = answer.json()
    return len(body.get("jobs", body) if isinstance(body, dict) else body)


def _first_gepa_job(folder: Path, backend: Any, task_app: Any, capsys: pytest.CaptureFixture[str]) -> str:
    """The id of a GEPA job (budget 24) ``synth-nb train`` submitted from ``gepa.toml``: the parent of a re-run."""
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=24))
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url]) == 0
    return _submitted(capsys.readouterr().out, "prompt_learning")


def test_a_rerun_submits_the_same_plan_byte_for_byte(folder: Path, backend: Any, task_app: Any,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    parent = _first_gepa_job(folder, backend, task_app, capsys)
    assert main(["train", "--rerun", parent, "--backend", backend.url]) == 0
    out, err = capsys.readouterr()
    child = _submitted(out, "prompt_learning")
    assert f"diff against job {parent}: none (the same plan; new idempotency key synth-nb-" in err
    first, second = folder / "results" / parent, folder / "results" / child
    assert (first / "plan.json").read_bytes() == (second / "plan.json").read_bytes()
    runs = [json.loads((f / "run.json").read_text()) for f in (first, second)]
    assert runs[0]["idempotency_key"] != runs[1]["idempotency_key"]
    assert runs[1]["parent"] == parent and runs[0]["parent"] is None
    assert runs[0]["config_sha256"] == runs[1]["config_sha256"]
    assert ENV_KEY not in out + err


def test_a_changed_config_is_shown_as_a_diff_and_nothing_is_sent(folder: Path, backend: Any, task_app: Any,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    parent = _first_gepa_job(folder, backend, task_app, capsys)
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=30))
    before = _job_count(backend, "/prompt-learning/online/jobs")
    assert main(["train", "--rerun", parent, "--backend", backend.url]) == 2
    out, err = capsys.readouterr()
    assert "the config on disk changed since the job was submitted:" in err
    assert "-budget = 24" in err and "+budget = 30" in err
    assert "the plan differs from the job's:" in err and '"budget": 30' in err
    assert "nothing was submitted" in err and "submitted prompt_learning job" not in out
    assert _job_count(backend, "/prompt-learning/online/jobs") == before


def test_a_changed_dataset_stops_the_rerun(folder: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from synth_nb.local import start_backend

    with start_backend(port=0, default_executor="replay", executor_options={"replay": {"speed": 50}}) as replay:
        monkeypatch.setenv("SYNTH_API_KEY", replay.api_key)
        (folder / "train.jsonl").write_text("".join(CHAT % i for i in range(5)))
        (folder / "sft.toml").write_text(MINIMAL_SFT)
        assert main(["train", "-c", "sft.toml", "--backend", replay.url]) == 0
        parent = _submitted(capsys.readouterr().out, "sft")
        (folder / "train.jsonl").write_text("".join(CHAT % i for i in range(6)))
        assert main(["train", "--rerun", parent, "--backend", replay.url]) == 2
        err = capsys.readouterr().err
        assert "dataset training_file (" in err and "sha256" in err and "then," in err
        assert _job_count(replay, "/learning/jobs") == 1


def test_rerun_refuses_overrides_and_unknown_jobs(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--rerun", "pl_nope", "--model", "Qwen/Qwen3-4B"]) == 2
    assert "--rerun repeats the job's own config and overrides; drop --model" in capsys.readouterr().err
    assert main(["train", "--rerun", "pl_nope"]) == 2
    assert "no bundle of job pl_nope in" in capsys.readouterr().err


def test_the_magic_reruns_from_the_bundle(folder: Path, backend: Any, task_app: Any,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    parent = _first_gepa_job(folder, backend, task_app, capsys)
    job = run_magic(folder, f"--rerun {parent} --backend {backend.url} --wait", "rerun.ipynb")
    out = capsys.readouterr().out
    assert f"diff against job {parent}: none" in out and f"(re-run of {parent})" in out
    assert job.status == "succeeded" and job.id != parent
    bundle = folder / "results" / job.id
    assert (bundle / "plan.json").read_bytes() == (folder / "results" / parent / "plan.json").read_bytes()


def test_a_dry_run_rerun_shows_the_diff_and_sends_nothing(folder: Path, backend: Any, task_app: Any,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    parent = _first_gepa_job(folder, backend, task_app, capsys)
    before = _job_count(backend, "/prompt-learning/online/jobs")
    assert main(["train", "--rerun", parent, "--dry-run", "--backend", backend.url]) == 0
    out, err = capsys.readouterr()
    assert f"diff against job {parent}: none" in err and f"dry run: the re-run of {parent} was not sent" in err
    assert "submitted" not in out
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=30))
    assert main(["train", "--rerun", parent, "--dry-run", "--backend", backend.url]) == 2
    assert "+budget = 30" in capsys.readouterr().err
    assert _job_count(backend, "/prompt-learning/online/jobs") == before


def test_check_with_rerun_checks_the_reruns_plan(folder: Path, backend: Any, task_app: Any,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    parent = _first_gepa_job(folder, backend, task_app, capsys)
    before = _job_count(backend, "/prompt-learning/online/jobs")
    assert main(["train", "--check", "--rerun", parent, "--backend", backend.url]) == 0
    out, err = capsys.readouterr()
    assert f"re-run of job {parent}" in err and "pre-flight check: " in out and "gepa.toml" in out
    assert "rollout.budget 24" in out and ENV_KEY not in out + err
    assert _job_count(backend, "/prompt-learning/online/jobs") == before
