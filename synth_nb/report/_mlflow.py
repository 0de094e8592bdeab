"""MLflow: one run per job, found again by its ``synth_nb.job_id`` tag.

The store is ``MLFLOW_TRACKING_URI`` when set, else a SQLite store beside the reports
(``<report dir>/mlflow.db``, artifacts in ``<report dir>/mlartifacts``). The experiment is
``--mlflow-experiment``, else the config file's name. The run holds the config's keys as params (secrets
masked), every metric with its step, tags for flow / algorithm / job id / backend, the job's bundle (or
its summary) as artifacts, and it ends with the job's status: FINISHED, FAILED or KILLED.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from synth_nb.report._base import Point, Reporter, shown_path
from synth_nb.secrets.redact import redact

__all__ = ["JOB_TAG", "MLflowReporter", "metric_key", "run_status"]

JOB_TAG = "synth_nb.job_id"
#: MLflow's limits (``mlflow.utils.validation``): key length, param value length, params per batch
KEY_LENGTH, VALUE_LENGTH, PARAMS_PER_BATCH = 250, 6000, 100
#: characters MLflow refuses in metric and param names
_BAD_KEY = re.compile(r"[^\w./ :-]")
_STATUS = {"succeeded": "FINISHED", "failed": "FAILED", "error": "FAILED", "cancelled": "KILLED"}


def metric_key(name: str) -> str:
    """The MLflow key of a metric or config key (characters MLflow refuses become ``_``)."""
    key = _BAD_KEY.sub("_", name).strip("/")[:KEY_LENGTH]
    return key or "_"


def run_status(job_status: str) -> str:
    """The MLflow run status a terminal job status ends the run with."""
    return _STATUS.get(job_status, "FAILED")


def _flat(node: Any, prefix: str = "") -> Iterator[tuple[str, str, Any]]:
    """``(dotted key, last key, value)`` of every leaf of a TOML document; tables in arrays get their index."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _flat(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(node, list) and any(isinstance(item, dict) for item in node):
        for index, item in enumerate(node):
            yield from _flat(item, f"{prefix}.{index}")
    else:
        yield prefix, prefix.rsplit(".", 1)[-1], node


class MLflowReporter(Reporter):
    name = "mlflow"
    modules = ("mlflow",)

    client: Any = None
    run_id: str = ""

    def _tracking_uri(self) -> str:
        uri = os.environ.get("MLFLOW_TRACKING_URI")
        if uri:
            return uri
        self.folder.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{(self.folder / 'mlflow.db').resolve()}"

    def where(self) -> str:
        uri = os.environ.get("MLFLOW_TRACKING_URI")
        if uri and not uri.startswith(("sqlite:", "file:")) and "://" in uri:
            return f"the MLflow server {redact(uri)}"
        store = redact(uri) if uri else f"sqlite:///{shown_path(self.folder / 'mlflow.db')}"
        return f"mlflow ui --backend-store-uri {shlex.quote(store)}"

    def stored_in(self) -> str:
        uri = os.environ.get("MLFLOW_TRACKING_URI")
        return redact(uri) if uri else str(shown_path(self.folder / "mlflow.db"))

    def _resume(self) -> Mapping[str, Iterable[int]]:
        from mlflow import MlflowClient

        for name in ("mlflow.store.db.utils", "alembic"):  # creating the store's tables is no news
            logging.getLogger(name).setLevel(logging.WARNING)
        self.client = MlflowClient(tracking_uri=self._tracking_uri())
        run = self._find_run()
        if run is None:
            self.run_id = self._create_run()
            return {}
        self.run_id = run.info.run_id
        return {key: [m.step for m in self.client.get_metric_history(self.run_id, key)] for key in run.data.metrics}

    def _find_run(self) -> Any:
        """The run of this job in any experiment of the store (a re-attach may name another experiment)."""
        from mlflow.entities import ViewType

        experiments = [e.experiment_id for e in self.client.search_experiments(view_type=ViewType.ALL)]
        if not experiments:
            return None
        job_id = self.job.id.replace("'", "")
        runs = self.client.search_runs(experiments, filter_string=f"tags.`{JOB_TAG}` = '{job_id}'", max_results=1)
        return runs[0] if runs else None

    def _experiment_id(self) -> str:
        name = self.experiment or self.project()
        found = self.client.get_experiment_by_name(name)
        if found is not None:
            if found.lifecycle_stage == "deleted":
                self.client.restore_experiment(found.experiment_id)
            return str(found.experiment_id)
        location = None if os.environ.get("MLFLOW_TRACKING_URI") else (self.folder / "mlartifacts").resolve().as_uri()
        return str(self.client.create_experiment(name, artifact_location=location))

    def _create_run(self) -> str:
        from mlflow.entities import Param

        job, hidden = self.job, tuple(self.job.hidden)
        tags = {JOB_TAG: job.id, "synth_nb.flow": job.flow, "synth_nb.algorithm": job.algorithm or "",
                "synth_nb.backend": redact(job.backend_url, hidden)}
        config = self.config_path()
        if config is not None:
            tags["synth_nb.config"] = redact(str(config), hidden)
        run = self.client.create_run(self._experiment_id(), run_name=job.id, tags=tags)
        params = [Param(key, value) for key, value in self._params().items()]
        for start in range(0, len(params), PARAMS_PER_BATCH):
            self.client.log_batch(run.info.run_id, params=params[start:start + PARAMS_PER_BATCH])
        return str(run.info.run_id)

    def _params(self) -> dict[str, str]:
        """The config's keys, flattened (``prompt_learning.gepa.rollout.budget``), secrets masked."""
        hidden = tuple(self.job.hidden)
        return {metric_key(key): redact(str(value), hidden)[:VALUE_LENGTH]
                for key, _, value in _flat(self.masked_config() or {})}

    def _key(self, name: str) -> str:
        return metric_key(name)

    def _write(self, points: Sequence[Point]) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        metrics = [Metric(metric_key(p.name), p.value, int(p.time * 1000) if p.time is not None else now, p.step)
                   for p in points]
        self.client.log_batch(self.run_id, metrics=metrics)

    def _flushed(self) -> None:
        """``log_batch`` is committed when it returns."""

    def _close(self) -> None:
        """The client holds nothing to release."""

    def _finish(self, summary: Path | None) -> None:
        if not self.job.terminal:
            return  # the job goes on: the run stays RUNNING until an attach sees it end
        bundle = self.bundle_folder()
        if bundle is not None:
            self.client.log_artifacts(self.run_id, str(bundle), artifact_path="bundle")
        elif summary is not None:
            self.client.log_artifacts(self.run_id, str(summary.parent), artifact_path="summary")
        self.client.set_terminated(self.run_id, status=run_status(self.job.status))
