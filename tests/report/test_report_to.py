"""``job.report_to(...)`` on real SFT and RL jobs of the embedded backend (its bundled runs replayed),
attached before the first point streams: every point reaches both trackers as it arrives, the runs end with
the job, and reporting again (a finished job, another process) adds nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from bundle_backend import ENV_KEY
from minimal_configs import MINIMAL_RL, MINIMAL_SFT
from trackers import (
    as_float32,
    check_trackers,
    job_series,
    mlflow_client,
    mlflow_runs,
    mlflow_series,
    tensorboard_series,
    tensorboard_tags,
)

from synth_nb import pipeline
from synth_nb.backend import normalize_backend_url
from synth_nb.job import Job, JobRegistry
from synth_nb.pipeline import SecretSources, Target

CHAT = '{"messages": [{"role": "user", "content": "hi %d"}, {"role": "assistant", "content": "hello"}]}\n'


def _config(flow: str, folder: Path, task_app: Any) -> Path:
    if flow == "sft":
        (folder / "train.jsonl").write_text("".join(CHAT % i for i in range(5)))
        text = MINIMAL_SFT
    else:
        text = MINIMAL_RL.replace("https://my-task-app.example.com", task_app.url)
    path = folder / f"{flow}_run.toml"
    path.write_text(text)
    return path


async def _submit(path: Path, backend: Any, folder: Path) -> Job:
    target = Target(normalize_backend_url(backend.url), backend.api_key)
    sources = SecretSources(environ={"ENVIRONMENT_API_KEY": ENV_KEY}, cwd=folder)
    prepared = pipeline.prepare_config(path, overrides=pipeline.build_overrides({}, target), target=target, sources=sources)
    assert prepared.ok and prepared.plan is not None, prepared.error
    return await pipeline.submit_plan(prepared.plan, target, backend.api_key, registry=JobRegistry(folder),
                                 poll_interval=0.5)


def report_live(flow: str, folder: Path, backend: Any, task_app: Any, runs: Path, *trackers: str) -> Job:
    """Submit a ``flow`` job, report it to ``trackers`` before its first point streams and follow it to its
    successful end: every tracker wrote each point as it came and ended its run."""

    async def run() -> Job:
        job = await _submit(_config(flow, folder, task_app), backend, folder)
        assert not job.metrics  # nothing streamed yet: every point below arrived through the listener
        reporters = job.report_to(*trackers, report_dir=runs)
        assert [r.name for r in reporters] == list(trackers)
        await job.wait(timeout=600)  # a guard, not a speed check
        await job.client.aclose()
        assert all(r.ended and r.problem is None for r in reporters)
        assert [r.count for r in reporters] == [len(job.metrics)] * len(trackers)
        return job

    job = asyncio.run(run())
    assert job.status == "succeeded"
    return job


@pytest.mark.parametrize("flow", ["sft", "rl"])
def test_report_to_follows_a_live_job_and_ends_its_run(flow: str, tmp_path: Path, replay_backend: Any,
                                                       task_app: Any, mlflow_uri: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    job = report_live(flow, tmp_path, replay_backend, task_app, runs, "tensorboard", "mlflow")
    client, mlrun = check_trackers(job, runs, mlflow_uri)
    expected = job_series(job)
    assert mlrun.info.status == "FINISHED" and mlrun.data.tags["synth_nb.flow"] == flow
    assert client.get_experiment(mlrun.info.experiment_id).name == f"{flow}_run"
    assert mlrun.data.params["compute.gpu_type"] == "H100"

    again = job.report_to("tensorboard,mlflow", report_dir=runs)  # the job is over: writes what is missing
    assert all(r.ended and r.problem is None for r in again)
    assert tensorboard_series(runs / job.id) == as_float32(expected)
    # each tag is the panel's label, then the backend's name (findable): TensorBoard groups by the label
    labels = {"sft": {"train.loss": "train loss", "val.loss": "validation loss"},
              "rl": {"train.reward_mean": "mean reward", "eval.reward_mean": "eval reward"},
              "prompt_learning": {"gepa.best_score": "best so far", "gepa.trial.score": "trial score (small batch)"}}
    tags = tensorboard_tags(runs / job.id)
    for name, label in labels[flow].items():
        if name in expected:
            assert f"{label}/{name}" in tags, tags
    assert {tag.rsplit("/", 1)[-1] for tag in tags} == set(expected)
    (same,) = mlflow_runs(client, job.id)
    assert same.info.run_id == mlrun.info.run_id and mlflow_series(client, same) == expected
    assert "warning" not in capsys.readouterr().err
    assert not (runs / "mlflow.db").exists()  # MLFLOW_TRACKING_URI is honoured


def test_a_cancelled_job_ends_its_mlflow_run_killed(tmp_path: Path, mlflow_uri: str) -> None:
    from synth_nb.local import start_backend

    runs = tmp_path / "runs"
    with start_backend(port=0, default_executor="replay", executor_options={"replay": {"speed": 1}}) as backend:

        async def run() -> Job:
            job = await _submit(_config("sft", tmp_path, None), backend, tmp_path)
            assert await job.cancel() == "cancelled"
            (reporter,) = job.report_to("mlflow", report_dir=runs, experiment="cancelled runs")
            await job.client.aclose()
            assert reporter.ended and reporter.problem is None
            return job

        job = asyncio.run(run())
    client = mlflow_client(mlflow_uri)
    (mlrun,) = mlflow_runs(client, job.id)
    assert mlrun.info.status == "KILLED" and client.get_experiment(mlrun.info.experiment_id).name == "cancelled runs"
    assert mlflow_series(client, mlrun) == job_series(job)


def test_a_failing_tracker_is_one_warning_and_the_job_is_still_followed(tmp_path: Path, replay_backend: Any,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "bogus://nowhere")  # a store MLflow cannot open
    runs = tmp_path / "runs"

    async def run() -> Job:
        job = await _submit(_config("sft", tmp_path, None), replay_backend, tmp_path)
        board, broken = job.report_to("tensorboard", "mlflow", report_dir=runs)
        assert broken.problem is not None and board.problem is None
        await job.wait(timeout=600)  # a guard, not a speed check
        await job.client.aclose()
        return job

    job = asyncio.run(run())
    assert job.status == "succeeded"
    assert tensorboard_series(runs / job.id) == as_float32(job_series(job))
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: --report-to mlflow stopped for job {job.id}: ")
