"""``--report-to wandb,trackio`` on real GEPA, SFT and RL jobs of the embedded backend: W&B's offline run
files (read with W&B's own reader) and Trackio's local store (read with Trackio's API) hold every point the
job streamed, with its step; the masked config as the run's config; the bundle in the run's files or as an
artifact; the run ended with the job; and attaching or reporting again writes nothing twice."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from bundle_backend import ENV_KEY
from test_report_cli import TOML_CANARY, train_reported
from test_report_to import _config, _submit, report_live
from trackers import check_wandb_trackio, trackio_series, wandb_of, wandb_records, wandb_series

from synth_nb.cli.main import main
from synth_nb.job import Job


def _segment_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for update in wandb_of(records, "summary"):
        summary.update(update.get("update") or {})
    return summary


def _saved_files(records: list[dict[str, Any]]) -> set[str]:
    return {f["path"] for files in wandb_of(records, "files") for f in files.get("files", [])}


def test_train_reports_a_gepa_job_to_wandb_and_trackio_and_attaching_twice_adds_nothing(
        folder: Path, backend: Any, task_app: Any, capsys: pytest.CaptureFixture[str]) -> None:
    job, out, err = train_reported(folder, backend, task_app, capsys, "wandb,trackio")
    assert "Trackio" not in out and "wandb:" not in out + err  # the trackers' own messages stay out
    job_id = job.id
    runs = folder / "runs"

    (segment,), tracked = check_wandb_trackio(job, runs, "gepa")
    run, *updates = wandb_of(segment, "run")
    assert updates and updates[-1]["tags"] == ["prompt_learning", "gepa", "succeeded"]
    assert run["run_id"] == job_id and run["display_name"] == job_id and run["project"] == "gepa"
    settings = run["config"]["update"]
    assert settings["synth_nb"] == {"job_id": job_id, "flow": "prompt_learning", "algorithm": "gepa",
                                    "backend": job.backend_url}
    assert settings["prompt_learning"]["gepa"]["rollout"]["budget"] == 24
    assert settings["prompt_learning"]["task_app_api_key"].endswith("7777")
    assert [record["exit_code"] for record in wandb_of(segment, "exit")] == [0]
    assert _segment_summary(segment)["synth_nb.status"] == "succeeded"
    assert {"bundle/run.json", "bundle/summary.md", "bundle/config.toml"} <= _saved_files(segment)
    saved = next((runs / "wandb").glob(f"offline-run-*-{job_id}/files/bundle/summary.md"))
    assert saved.read_text().startswith(f"# Prompt-learning summary: `{job_id}`")

    assert tracked.config["prompt_learning"]["gepa"]["rollout"]["budget"] == 24
    assert tracked.config["prompt_learning"]["task_app_api_key"].endswith("7777")
    assert tracked.config["synth_nb"]["job_id"] == job_id
    assert [(a["level"], a["title"]) for a in tracked.alerts()] == [("info", f"job {job_id} succeeded")]
    from trackio.sqlite_storage import SQLiteStorage

    manifest = SQLiteStorage.get_artifact_manifest("gepa", f"{job_id}-bundle", None)
    assert {"summary.md", "run.json", "config.toml"} <= {entry["path"] for entry in manifest["manifest"]}
    for text in (json.dumps(segment), json.dumps(tracked.config)):
        assert TOML_CANARY not in text and ENV_KEY not in text

    for _ in range(2):  # the same points again, each already held by both trackers
        # W&B names an offline run's folder by the second it starts: two attaches within one second (attach is
        # that fast now) would share one folder, so each starts in a second of its own
        started = int(time.time())
        while int(time.time()) == started:
            time.sleep(0.05)
        assert main(["attach", job_id, "--backend", backend.url, "--report-to", "wandb,trackio"]) == 0
    assert "warning" not in capsys.readouterr().err
    segments, again = check_wandb_trackio(job, runs, "gepa")
    assert len(segments) == 3 and again.id == tracked.id
    later = [record for records in segments[1:] for record in records]
    assert not [record for record in later if record.get("type") == "history"]  # nothing written twice
    assert len(again.alerts()) == 3  # each attach says again how the job ended


@pytest.mark.parametrize("flow", ["sft", "rl"])
def test_report_to_wandb_and_trackio_follows_a_live_job(flow: str, tmp_path: Path, replay_backend: Any,
                                                        task_app: Any, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    job = report_live(flow, tmp_path, replay_backend, task_app, runs, "wandb", "trackio")
    project = f"{flow}_run"
    (segment,), tracked = check_wandb_trackio(job, runs, project)
    assert wandb_of(segment, "run")[0]["config"]["update"]["compute"]["gpu_type"] == "H100"
    assert tracked.config["compute"]["gpu_type"] == "H100" and tracked.config["synth_nb"]["flow"] == flow
    assert [record["exit_code"] for record in wandb_of(segment, "exit")] == [0]

    again = job.report_to("wandb,trackio", report_dir=runs)  # the job is over: writes what is missing
    assert all(r.ended and r.problem is None for r in again)
    segments = wandb_records(runs, job.id)
    assert len(segments) == 2 and wandb_series(segments) == wandb_series([segment])
    assert not wandb_of(segments[1], "history")
    assert trackio_series(project, job.id) == wandb_series([segment])
    assert "warning" not in capsys.readouterr().err


def test_a_cancelled_job_ends_its_wandb_run_failed_and_its_trackio_run_with_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reported into a relative ``runs`` folder from a process whose W&B service started in another folder (a
    kernel that changed folder): the run lands in the folder the reporter was given."""
    import wandb

    from synth_nb.local import start_backend

    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    wandb.setup()
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "runs"
    with start_backend(port=0, default_executor="replay", executor_options={"replay": {"speed": 1}}) as backend:

        async def run() -> Job:
            job = await _submit(_config("sft", tmp_path, None), backend, tmp_path)
            assert await job.cancel() == "cancelled"
            reporters = job.report_to("wandb", "trackio", report_dir="runs")
            await job.client.aclose()
            assert all(r.ended and r.problem is None for r in reporters)
            said.extend(r.said() for r in reporters)
            return job

        said: list[str] = []
        job = asyncio.run(run())
    # where each wrote, and how to look (what a command prints when following ends)
    wandb_line, trackio_line = said
    assert wandb_line.startswith("report: wandb holds ") and f" of job {job.id} in runs/wandb/offline-run-" in wandb_line
    assert wandb_line.endswith(" · view: wandb sync runs/wandb/offline-run-*")
    assert f"of job {job.id} in " in trackio_line and "trackio show --project sft_run" in trackio_line
    (segment,) = wandb_records(runs, job.id)
    assert [record["exit_code"] for record in wandb_of(segment, "exit")] == [130]
    assert _segment_summary(segment)["synth_nb.status"] == "cancelled"
    assert wandb_series([segment]) == trackio_series("sft_run", job.id)
    from trackers import trackio_run

    alerts = trackio_run("sft_run", job.id).alerts()
    assert [(a["level"], a["title"]) for a in alerts] == [("warn", f"job {job.id} cancelled")]
