"""The ``JobContext`` of a dry run: the job's own executor runs, but for no job.

The dry training run (``dry_training``: a few of a training job's steps) and the rehearsal of a small prompt
search (``dry_search``: the whole search) run the job's executor with this context instead of a stored
job's: events and metrics are kept in memory with the time each arrived (the dry run reads its figures from
them), results go nowhere, policies are served under an id of no job and removed afterwards by the caller.
It reaches the backend's own task apps and model servers as a job's context does, so the executor takes
the path the job would take; given a scratch ``Storage`` (a rehearsal's, removed afterwards), it also stores
each event and metric point there as a job's context does, so a run timed whole pays for its events as the
job will.
"""

from __future__ import annotations

import secrets
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth_nb.local.executors.base import PolicyHandler
from synth_nb.local.redact import secret_values
from synth_nb.local.runner import JobRunner, store_event, store_metric
from synth_nb.local.storage import Storage

if TYPE_CHECKING:
    from synth_nb.local.examples.contract import RolloutAnswer

__all__ = ["DryContext"]


class DryContext:
    """A ``JobContext`` for no job: events and metrics are timed and kept in memory (and in ``store``, a scratch
    one, when given); nothing is kept once the caller is done."""

    def __init__(self, runner: JobRunner, kind: str, body: dict[str, Any], work_dir: Path,
                 files: dict[str, Path], key: str | None, store: Storage | None = None) -> None:
        self.job_id = f"dry_{secrets.token_hex(8)}"
        self.kind, self.body, self.work_dir = kind, body, work_dir
        self.cancelled = threading.Event()
        self.backend_url = runner.base_url
        self.environment_api_key = key
        self.options: dict[str, Any] = {}
        #: the backend's local model servers, shared with its jobs (a search whose proposer is one)
        self.model_servers = runner.model_servers
        self._runner, self._files, self._store = runner, files, store
        #: masked in what goes to the scratch store, as a job's context masks what it stores
        self._secrets = [*secret_values(body), *([key] if key else [])]
        if store is not None:
            store.create_job(self.job_id, kind, "dry", {})
        self._lock = threading.Lock()
        #: (seconds since the run started, event type, its data)
        self.events: list[tuple[float, str, dict[str, Any]]] = []
        #: (seconds since the run started, metric name, step)
        self.metrics: list[tuple[float, str, int]] = []
        self.started = time.perf_counter()

    def _now(self) -> float:
        return time.perf_counter() - self.started

    def emit(self, type: str, message: str = "", data: dict[str, Any] | None = None, level: str = "info") -> None:
        with self._lock:
            self.events.append((self._now(), type, dict(data or {})))
        if self._store is not None:
            store_event(self._store, self.job_id, self._secrets, type, message, data, level)

    def metric(self, name: str, step: int, value: float, data: dict[str, Any] | None = None) -> None:
        with self._lock:
            self.metrics.append((self._now(), name, step))
        if self._store is not None:
            store_metric(self._store, self.job_id, name, step, value, data)

    def update_result(self, **fields: Any) -> None:
        pass

    def file_path(self, file_id: str) -> Path:
        return self._files[file_id]

    def serve_policy(self, handler: PolicyHandler) -> str:
        return f"{self._runner.base_url}/v1/policies/{self._runner.policies.add(self.job_id, handler)}"

    def task_app_in_process(self, url: str) -> RolloutAnswer | None:
        """The backend's own task app at ``url`` as a call in this process, as a job's context has it."""
        return self._runner.task_app_in_process(url)

    def first(self, type: str, after: float = -1.0) -> tuple[float, dict[str, Any]] | None:
        return next(((t, d) for t, kind, d in self.events if kind == type and t > after), None)

    def times(self, type: str) -> list[float]:
        return [t for t, kind, _ in self.events if kind == type]
