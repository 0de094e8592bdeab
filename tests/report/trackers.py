"""Reading back what the trackers hold, with their own readers (TensorBoard's ``EventAccumulator``, MLflow's
``MlflowClient``, W&B's ``wandb leet inspect``, Trackio's API and storage), to compare point by point with a
job's history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def job_series(job: Any) -> dict[str, list[tuple[int, float]]]:
    """Every metric series the job holds, by name."""
    return {name: job.metric_series(name) for name in job.metrics.last_steps}


def tensorboard_tags(logdir: Path) -> list[str]:
    """The scalar tags in ``logdir``'s event files (``<the panel's label>/<the backend's name>``)."""
    from tensorboard.backend.event_processing.event_accumulator import SCALARS, EventAccumulator

    events = EventAccumulator(str(logdir), size_guidance={SCALARS: 0}, purge_orphaned_data=False)
    events.Reload()
    return sorted(events.Tags()["scalars"])


def tensorboard_series(logdir: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar series in ``logdir``'s event files, read with TensorBoard's own reader (all points), by the
    backend's metric name (the last part of its tag)."""
    from tensorboard.backend.event_processing.event_accumulator import SCALARS, TENSORS, EventAccumulator

    events = EventAccumulator(str(logdir), size_guidance={SCALARS: 0, TENSORS: 0}, purge_orphaned_data=False)
    events.Reload()
    return {tag.rsplit("/", 1)[-1]: [(e.step, e.value) for e in events.Scalars(tag)]
            for tag in events.Tags()["scalars"]}


def tensorboard_text(logdir: Path, tag: str) -> list[str]:
    from tensorboard.backend.event_processing.event_accumulator import TENSORS, EventAccumulator
    from tensorboard.util import tensor_util

    events = EventAccumulator(str(logdir), size_guidance={TENSORS: 0})
    events.Reload()
    return [tensor_util.make_ndarray(e.tensor_proto).item().decode() for e in events.Tensors(tag)]


def as_float32(series: dict[str, list[tuple[int, float]]]) -> dict[str, list[tuple[int, float]]]:
    """TensorBoard keeps scalars as float32."""
    return {name: [(step, float(np.float32(value))) for step, value in points] for name, points in series.items()}


def mlflow_client(store: Path | str) -> Any:
    """A reader of the store at ``store`` (a URI, or a report folder holding the default ``mlflow.db``)."""
    from mlflow import MlflowClient

    uri = store if isinstance(store, str) else f"sqlite:///{(store / 'mlflow.db').resolve()}"
    return MlflowClient(tracking_uri=uri)


def mlflow_runs(client: Any, job_id: str) -> list[Any]:
    from mlflow.entities import ViewType

    experiments = [e.experiment_id for e in client.search_experiments(view_type=ViewType.ALL)]
    return list(client.search_runs(experiments, filter_string=f"tags.`synth_nb.job_id` = '{job_id}'"))


def mlflow_series(client: Any, run: Any) -> dict[str, list[tuple[int, float]]]:
    """Every metric of ``run`` with its whole history, in step order (MLflow's own reader)."""
    return {key: sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, key))
            for key in run.data.metrics}


def check_trackers(job: Any, logdir: Path, store: Path | str) -> tuple[Any, Any]:
    """Both trackers hold every metric series the job streamed; the MLflow client and the job's run."""
    expected = job_series(job)
    assert expected and sum(map(len, expected.values())) > len(expected)
    assert tensorboard_series(logdir / job.id) == as_float32(expected)
    client = mlflow_client(store)
    (run,) = mlflow_runs(client, job.id)
    assert mlflow_series(client, run) == expected
    return client, run


def wandb_records(report_dir: Path, job_id: str) -> list[list[dict[str, Any]]]:
    """The records of each offline W&B segment of the job under ``report_dir``, read with W&B's own reader
    (``wandb leet inspect --json``), oldest segment first."""
    from synth_nb.report._wandb import read_records, run_id

    rid = run_id(job_id)
    segments = sorted((report_dir / "wandb").glob(f"offline-run-*-{rid}/run-{rid}.wandb"))
    return [read_records(segment) for segment in segments]


def wandb_series(segments: list[list[dict[str, Any]]]) -> dict[str, list[tuple[int, float]]]:
    """Every metric the W&B history rows hold, with the step each row names, in step order."""
    series: dict[str, list[tuple[int, float]]] = {}
    for records in segments:
        for record in records:
            item = (record.get("history") or {}).get("item") or {}
            for key, value in item.items():
                if not key.startswith("_") and key != "step":
                    series.setdefault(key, []).append((int(item["step"]), float(value)))
    return {name: sorted(points) for name, points in series.items()}


def wandb_of(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The payloads of the records of one kind (``run``, ``exit``, ``files``, ``summary``…)."""
    return [record[kind] for record in records if record.get("type") == kind]


def trackio_run(project: str, job_id: str) -> Any:
    """The job's Trackio run, through Trackio's own API."""
    import trackio

    (run,) = [run for run in trackio.Api().runs(project) if run.name == job_id]
    return run


def trackio_series(project: str, job_id: str) -> dict[str, list[tuple[int, float]]]:
    """Every metric of the job's Trackio run with its step, in step order (Trackio's own storage API)."""
    from trackio.sqlite_storage import SQLiteStorage

    series: dict[str, list[tuple[int, float]]] = {}
    for row in SQLiteStorage.get_logs(project, job_id):
        for key, value in row.items():
            if key not in ("step", "timestamp"):
                series.setdefault(key, []).append((int(row["step"]), float(value)))
    return {name: sorted(points) for name, points in series.items()}


def check_wandb_trackio(job: Any, report_dir: Path, project: str) -> tuple[list[list[dict[str, Any]]], Any]:
    """W&B and Trackio each hold every metric series the job streamed, point for point; W&B's segments and
    the Trackio run."""
    expected = job_series(job)
    assert expected and sum(map(len, expected.values())) > len(expected)
    segments = wandb_records(report_dir, job.id)
    assert segments and wandb_series(segments) == expected
    assert trackio_series(project, job.id) == expected
    return segments, trackio_run(project, job.id)
