"""``--max-rollouts`` travels in the job body: the embedded backend stops scheduling rollouts at the limit
itself, the job ends "budget_exhausted" within one minibatch of it, and every report gives the job's own count.

Real GEPA and MIPRO jobs on the embedded backend and the bundled banking task app (keyword policy, offline
proposer), each with a config budget far above the limit, so only the limit sent with the job can stop it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from minimal_configs import BANKING_MIPRO, LOCAL_GEPA, with_values

from synth_nb.cli.main import main

ENV_KEY = "sk_env_CANARY_budget_cccccc_4242"


def _job_id(out: str) -> str:
    return out.split("submitted prompt_learning job ", 1)[1].split()[0]


def _events(folder: Path, job_id: str) -> list[dict[str, Any]]:
    lines = (folder / "results" / job_id / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _run(folder: Path, backend: Any, config: str, limit: int, capsys: pytest.CaptureFixture[str]
         ) -> tuple[str, str, list[dict[str, Any]], dict[str, Any]]:
    (folder / "pl.toml").write_text(config)
    code = main(["train", "-c", "pl.toml", "--backend", backend.url, "--max-rollouts", str(limit)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    job_id = _job_id(out)
    run = json.loads((folder / "results" / job_id / "run.json").read_text())
    plan = json.loads((folder / "results" / job_id / "plan.json").read_text())
    return out, job_id, _events(folder, job_id), {**run, "plan": plan}


def _assert_stopped_at(folder: Path, limit: int, minibatch: int, out: str, events: list[dict[str, Any]],
                       run: dict[str, Any], sent: dict[str, Any]) -> None:
    completed = [e["data"] for e in events if e["type"] == "prompt.learning.completed"]
    assert completed, "the job ended without its completed event"
    message = next(e["message"] for e in events if e["type"] == "prompt.learning.completed")
    assert message.startswith(f"finished: budget_exhausted (stopped at the rollout budget {limit}); "), message
    own = completed[-1]["rollouts_completed"]
    assert completed[-1]["finish_reason"] == "budget_exhausted"
    # never past the limit (the budget is reserved before each batch); short of it by less than one
    # search step, which the search does not start when it cannot finish it
    assert limit - 3 * minibatch <= own <= limit, own
    assert "Final status: succeeded" in out and "cancel: " not in out
    # the CLI's final block, the bundle and the job's own event give one count, and say who stopped it
    line = next(ln for ln in out.splitlines() if f"stopped by --max-rollouts {limit}: " in ln)
    assert f"stopped by --max-rollouts {limit}: {own} rollouts (limit {limit}); the backend ended the search " \
           "at the limit (budget_exhausted); the best prompt the backend reports is kept" in line, line
    assert sum(f"stopped by --max-rollouts {limit}" in ln for ln in out.splitlines()) == 1
    stopped = run["stopped_by"]
    assert (stopped["limit"], stopped["used"], stopped["by"], stopped["cancel"]) == \
        ("--max-rollouts", own, "backend", None)
    assert run["status"] == "succeeded"
    assert sent["termination_config"]["max_rollouts"] == limit
    summary = (folder / "results" / run["job_id"] / "summary.md").read_text()
    rollouts = next(line for line in summary.splitlines() if line.startswith("| Rollouts | "))
    assert f"({own} search + " in rollouts or f"| Rollouts | {own} · " in rollouts, summary
    stopped = next(line for line in summary.splitlines() if line.startswith("| Stopped | "))
    assert f"stopped by --max-rollouts {limit}: {own} rollouts (limit {limit})" in stopped, summary


def test_max_rollouts_is_sent_and_a_gepa_job_stops_at_it(
        folder: Path, backend: Any, task_app: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
    out, job_id, events, run = _run(folder, backend, LOCAL_GEPA.format(task_url=task_app.url, budget=3000), 50, capsys)
    table = run["plan"]["steps"][0]["body"]["config_body"]["prompt_learning"]
    assert table["gepa"]["rollout"]["budget"] == 50
    _assert_stopped_at(folder, 50, 4, out, events, run, table)
    assert f"watchdog on {job_id}: --max-rollouts 50: " in out and ENV_KEY not in out
    # the limit is part of the job: a re-run repeats it, given or not; another limit is a different job
    assert main(["train", "--rerun", job_id, "--dry-run", "--max-rollouts", "50"]) == 0
    assert f"diff against job {job_id}: none" in capsys.readouterr().err
    assert main(["train", "--rerun", job_id, "--dry-run"]) == 0
    assert f"diff against job {job_id}: none" in capsys.readouterr().err
    assert main(["train", "--rerun", job_id, "--dry-run", "--max-rollouts", "40"]) == 2
    err = capsys.readouterr().err
    assert "a re-run given no limit repeats the job's own" in err, err
    assert [ln.split() for ln in err.splitlines() if '"max_rollouts": 50' in ln and ln.startswith("-")], err


def test_the_preview_shows_the_limit_in_the_body(folder: Path, task_app: Any, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SYNTH_API_KEY", "sk_test_preview_0000")
    config = with_values(BANKING_MIPRO, task_app_url=task_app.url) + "max_rollouts = 500\n"  # [prompt_learning.mipro]
    (folder / "pl.toml").write_text(config)
    assert main(["train", "-c", "pl.toml", "--backend", "http://127.0.0.1:9", "--dry-run", "--json",
                 "--max-rollouts", "80"]) == 0
    table = json.loads(capsys.readouterr().out)["steps"][0]["body"]["config_body"]["prompt_learning"]
    assert table["termination_config"] == {"max_rollouts": 80} and table["mipro"]["max_rollouts"] == 500
    # lowered, never raised: a GEPA budget below the limit stays as the config says
    (folder / "pl.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=30))
    assert main(["train", "-c", "pl.toml", "--backend", "http://127.0.0.1:9", "--dry-run", "--json",
                 "--max-rollouts", "50"]) == 0
    table = json.loads(capsys.readouterr().out)["steps"][0]["body"]["config_body"]["prompt_learning"]
    assert (table["gepa"]["rollout"]["budget"], table["termination_config"]["max_rollouts"]) == (30, 50)


def test_max_rollouts_is_sent_and_a_mipro_job_stops_at_it(
        folder: Path, backend: Any, task_app: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
    config = with_values(BANKING_MIPRO, task_app_url=task_app.url, num_iterations=50)
    out, _job, events, run = _run(folder, backend, config, 60, capsys)
    table = run["plan"]["steps"][0]["body"]["config_body"]["prompt_learning"]
    _assert_stopped_at(folder, 60, 8, out, events, run, table)


def test_a_limit_below_the_baseline_rollouts_is_refused_before_anything_is_sent(
        folder: Path, backend: Any, task_app: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from shared_fixtures import prompt_learning_jobs

    monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
    (folder / "pl.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=3000))
    assert main(["train", "-c", "pl.toml", "--backend", backend.url, "--max-rollouts", "3"]) == 2
    err = capsys.readouterr().err
    assert "--max-rollouts 3 is smaller than the 4 rollouts that score the baseline prompt first " \
           "([prompt_learning.gepa.evaluation].val_seeds)" in err
    assert "Traceback" not in err and prompt_learning_jobs(backend) == []
