"""``synth-nb train/attach --report-to tensorboard,mlflow`` on a real GEPA job of the embedded backend: what
each tracker holds, read back with its own reader, is the job's history point for point, and attaching
again adds nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from bundle_backend import ENV_KEY
from minimal_configs import LOCAL_GEPA
from trackers import (
    check_trackers,
    tensorboard_text,
)

from synth_nb import pipeline
from synth_nb.backend import normalize_backend_url
from synth_nb.cli.main import main
from synth_nb.job import Job, JobRegistry
from synth_nb.pipeline import Target

TOML_CANARY = "sk_env_CANARY_report_params_7777"


def _history(job_id: str, backend: Any, folder: Path) -> Job:
    """The job's whole history, straight from the backend."""

    async def attach() -> Job:
        target = Target(normalize_backend_url(backend.url), backend.api_key)
        job = await pipeline.rebuild_job(job_id, target, backend.api_key, registry=JobRegistry(folder))
        await job.client.aclose()
        return job

    return asyncio.run(attach())



def train_reported(folder: Path, backend: Any, task_app: Any, capsys: pytest.CaptureFixture[str],
                   targets: str) -> tuple[Job, str, str]:
    """``synth-nb train --report-to TARGETS`` of a small GEPA job (its config holds a key): the job's whole
    history, and what the command printed on stdout and stderr."""
    config = LOCAL_GEPA.format(task_url=task_app.url, budget=24).replace(
        'results_folder = "results"', f'results_folder = "results"\ntask_app_api_key = "{TOML_CANARY}"')
    (folder / "gepa.toml").write_text(config)
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "--report-to", targets]) == 0
    out, err = capsys.readouterr()
    assert "warning" not in err and "Traceback" not in err
    job_id = out.split("submitted prompt_learning job ", 1)[1].split()[0]
    return _history(job_id, backend, folder), out, err


def test_train_reports_a_gepa_job_and_attaching_twice_adds_nothing(folder: Path, backend: Any, task_app: Any,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    job, out, _ = train_reported(folder, backend, task_app, capsys, "tensorboard,mlflow")
    job_id = job.id
    said = [line for line in out.splitlines() if line.startswith("report: ")]
    assert said[0].startswith("report: tensorboard holds ") and said[0].endswith(
        f" of job {job_id} in runs/{job_id} · view: tensorboard --logdir runs")
    assert said[1].startswith("report: mlflow holds ") and f" of job {job_id} in " in said[1]
    assert " · view: mlflow ui --backend-store-uri " in said[1]
    runs = folder / "runs"

    client, run = check_trackers(job, runs, runs)
    (summary,) = tensorboard_text(runs / job_id, "summary/text_summary")
    assert summary.startswith(f"# Prompt-learning summary: `{job_id}`")
    assert client.get_experiment(run.info.experiment_id).name == "gepa"
    assert run.info.status == "FINISHED" and run.info.run_name == job_id
    assert run.data.tags["synth_nb.flow"] == "prompt_learning" and run.data.tags["synth_nb.algorithm"] == "gepa"
    assert run.data.tags["synth_nb.backend"] == job.backend_url
    params = run.data.params
    assert params["prompt_learning.gepa.rollout.budget"] == "24"
    assert params["prompt_learning.initial_prompt.messages.0.role"] == "system"
    assert params["prompt_learning.task_app_api_key"].endswith("7777")
    assert all(TOML_CANARY not in value and ENV_KEY not in value for value in params.values())
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "bundle")}
    assert {"bundle/run.json", "bundle/summary.md", "bundle/config.toml", "bundle/metrics.jsonl"} <= artifacts
    bundled = Path(client.download_artifacts(run.info.run_id, "bundle/config.toml", str(folder / "dl")))
    assert TOML_CANARY not in bundled.read_text()

    for _ in range(2):  # the same points again, each already held by both trackers
        assert main(["attach", job_id, "--backend", backend.url, "--report-to", "tensorboard,mlflow"]) == 0
    assert "warning" not in capsys.readouterr().err
    _, again = check_trackers(job, runs, runs)
    assert again.info.run_id == run.info.run_id and again.info.status == "FINISHED"
    assert len(tensorboard_text(runs / job_id, "summary/text_summary")) == 1
