"""Runs jobs: one worker thread per running job, executors as plug-ins, cancellation, policy routes.

The runner owns the status lifecycle (queued -> running -> succeeded/failed/cancelled). An executor
exception fails the job with the error (and traceback) in an event; it never reaches the HTTP server.
It also holds, in memory only, the secrets withheld from each job's stored body until the job ends.
"""

from __future__ import annotations

import json
import logging
import math
import secrets
import threading
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth_nb.local.dialects import CLIENT_TERMINAL_EVENTS, METRIC_ALIASES, ending_events, with_later_names
from synth_nb.local.errors import StoreClosed
from synth_nb.local.executors import load_executor, prompt_learning_algorithm
from synth_nb.local.executors.base import Executor, PolicyHandler
from synth_nb.local.lifecycle import lifecycle_event
from synth_nb.local.model_server import ModelServers
from synth_nb.local.own_task_apps import TaskAppKeys, job_task_url
from synth_nb.local.redact import Withheld, restore_secrets, scrub, secret_values
from synth_nb.local.status_reads import StatusReads
from synth_nb.local.storage import JobRecord, Storage, to_json

if TYPE_CHECKING:  # the contract module imports aiohttp and Starlette, which the runner itself does not need
    from synth_nb.local.examples.contract import RolloutAnswer

__all__ = ["JobRunner", "LocalJobContext", "PolicyRoutes"]

log = logging.getLogger(__name__)

_STOPPED = "the local backend was stopped while this job was running; submit it again"
_SECRETS_LOST = ("the keys sent with this job (such as task_app_api_key) are kept in memory only and were lost "
                 "when the backend restarted; the job runs with the backend's own ENVIRONMENT_API_KEY")


class PolicyRoutes:
    """OpenAI-compatible handlers registered by running jobs, keyed by an unguessable policy id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._handlers: dict[str, tuple[str, PolicyHandler]] = {}

    def add(self, job_id: str, handler: PolicyHandler) -> str:
        policy_id = f"pol_{secrets.token_hex(12)}"
        with self._lock:
            self._handlers[policy_id] = (job_id, handler)
        return policy_id

    def get(self, policy_id: str) -> PolicyHandler | None:
        with self._lock:
            entry = self._handlers.get(policy_id)
        return entry[1] if entry else None

    def remove_job(self, job_id: str) -> None:
        with self._lock:
            for key in [k for k, (owner, _) in self._handlers.items() if owner == job_id]:
                del self._handlers[key]


def store_event(storage: Storage, job_id: str, secrets: Sequence[str], type: str, message: str,
                data: dict[str, Any] | None, level: str) -> None:
    """An event as a job stores it: with the names later clients read added (``dialects``), serialised once,
    the job's ``secrets`` masked in the text stored."""
    payload = to_json(with_later_names(type, data or {}))
    if secrets:
        message, payload = scrub(message, secrets), scrub(payload, secrets)
    storage.add_event_json(job_id, type, message, payload, level)


def store_metric(storage: Storage, job_id: str, name: str, step: int, value: float,
                 data: dict[str, Any] | None) -> None:
    """A metric point as a job stores it: under its name and, for some, the name later clients read."""
    storage.add_metric(job_id, name, step, value, data)
    if name in METRIC_ALIASES:
        storage.add_metric(job_id, METRIC_ALIASES[name], step, value, data)


class LocalJobContext:
    """The ``JobContext`` handed to executors; writes are dropped once the job has been finalised."""

    def __init__(self, job: JobRecord, storage: Storage, runner: JobRunner, withheld: Withheld | None) -> None:
        self.job_id = job.id
        self.kind = job.kind
        self.body = restore_secrets(job.body, withheld)
        self.work_dir = storage.jobs_dir / job.id
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.cancelled = threading.Event()
        self.backend_url = runner.base_url
        self.environment_api_key = runner.task_app_key(job_task_url(job.kind, self.body))
        self.options = dict(runner.executor_options.get(job.executor, {}))
        #: the backend's local model servers (``model_server``), shared by its jobs
        self.model_servers = runner.model_servers
        self.closed = threading.Event()
        #: set by a cancel request (as opposed to the server stopping)
        self.cancel_requested = False
        self._storage = storage
        self._runner = runner
        self._non_finite: set[str] = set()
        #: set once the job's end was announced to clients (finished_at filled, status read once more)
        self.end_announced = False
        env_key = self.environment_api_key
        self._secrets = [*secret_values(self.body), *([env_key] if env_key else [])]

    def emit(self, type: str, message: str = "", data: dict[str, Any] | None = None,
             level: str = "info") -> None:
        """Store an event, with the names later clients read added (``dialects``); the first event some
        client stops at waits until the job's results are on a status document it has read."""
        if not self.closed.is_set():
            if type in CLIENT_TERMINAL_EVENTS:
                self._runner.before_terminal_event(self)
            store_event(self._storage, self.job_id, self._secrets, type, message, data, level)

    def scrub(self, message: str, data: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
        """Mask the job's secrets (task-app keys from its body, the backend's env key) if they slipped in."""
        if not self._secrets:
            return message, data
        return scrub(message, self._secrets), self._scrub_data(data)

    def _scrub_data(self, data: dict[str, Any] | None) -> dict[str, Any] | None:
        if data:
            dumped = json.dumps(data, default=str)
            if any(secret in dumped for secret in self._secrets):
                return dict(json.loads(scrub(dumped, self._secrets)))
        return data

    def metric(self, name: str, step: int, value: float, data: dict[str, Any] | None = None) -> None:
        if self.closed.is_set():
            return
        if not math.isfinite(value):  # a diverged loss: say so once per metric rather than store NaN
            if name not in self._non_finite:
                self._non_finite.add(name)
                self.emit("metric.non_finite", f"{name} became {value} at step {step}; such points are not stored",
                          {"name": name, "step": step, "value": str(value)}, level="warning")
            return
        store_metric(self._storage, self.job_id, name, step, value, data)

    def update_result(self, **fields: Any) -> None:
        if not self.closed.is_set():
            self._storage.merge_result(self.job_id, self._scrub_data(fields) or {})

    def file_path(self, file_id: str) -> Path:
        return self._storage.file_path(file_id)

    def serve_policy(self, handler: PolicyHandler) -> str:
        policy_id = self._runner.policies.add(self.job_id, handler)
        return f"{self._runner.base_url}/v1/policies/{policy_id}"

    def task_app_in_process(self, url: str) -> RolloutAnswer | None:
        """``/rollout`` of the task app at ``url`` as a call in this process when this backend serves it
        itself, else None (call it over HTTP)."""
        return self._runner.task_app_in_process(url)


class JobRunner:
    """Starts, cancels and finalises jobs; thread-safe."""

    def __init__(self, storage: Storage, *, environment_api_key: str | None = None,
                 cancel_grace_seconds: float = 30.0, executor_options: dict[str, dict[str, Any]] | None = None,
                 executor_loader: Callable[[str], Executor] = load_executor, example_key: str | None = None) -> None:
        self.storage = storage
        self.environment_api_key = environment_api_key
        self._task_app_keys = TaskAppKeys(example_key, lambda: self.base_url)
        #: status reads of running jobs (the server notes them), for ``before_terminal_event``
        self.status_reads = StatusReads()
        self.cancel_grace_seconds = cancel_grace_seconds
        self.executor_options = executor_options or {}
        self.policies = PolicyRoutes()
        #: ``transformers serve`` processes started for jobs' local models; stopped by ``shutdown``
        self.model_servers = ModelServers(storage.data_dir / "model-servers")
        self.base_url = ""
        #: ``(task app URL, base_url)`` -> its ``/rollout`` called in this process, for the examples this
        #: backend serves itself (``examples.mounted``); None: every task app is called over HTTP
        self.task_apps_in_process: Callable[[str, str], RolloutAnswer | None] | None = None
        self._load = executor_loader
        self._lock = threading.Lock()
        self._contexts: dict[str, LocalJobContext] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._withheld: dict[str, Withheld] = {}
        self._stopping = False

    def task_app_in_process(self, url: str) -> RolloutAnswer | None:
        """``/rollout`` of the task app at ``url`` as a call in this process when this backend serves it
        itself (``task_apps_in_process``), else None (call it over HTTP)."""
        served = self.task_apps_in_process
        return served(url, self.base_url) if served is not None else None

    def task_app_key(self, url: str | None) -> str | None:
        """The key to send to the task app at ``url``: the ``ENVIRONMENT_API_KEY`` held, else this backend's
        example key when ``url`` is one of its own example apps (``own_task_apps``), else None."""
        return self._task_app_keys.for_url(url, self.environment_api_key)

    def before_terminal_event(self, ctx: LocalJobContext) -> None:
        """Before the first event any client stops at: ``finished_at`` goes on the status document (with the
        results the executor filled already) and, when someone polls the job, it waits for one more read."""
        if ctx.end_announced:
            return
        ctx.end_announced = True
        self.storage.mark_finished(ctx.job_id)
        self.status_reads.wait_for_next(ctx.job_id, ctx.cancelled)

    def withhold(self, job_id: str, secrets: Withheld) -> None:
        """Keep the secrets taken out of a new job's body (memory only) until the job ends."""
        if secrets:
            with self._lock:
                self._withheld[job_id] = secrets

    def start(self, job_id: str) -> JobRecord:
        """Start a queued job (idempotent: running or finished jobs are left alone)."""
        job = self.storage.get_job(job_id)
        if job is None:
            raise KeyError(job_id)
        if job.status != "queued":
            return job
        executor = self._load(job.executor)  # outside the lock: may import torch
        with self._lock:
            job = self.storage.get_job(job_id)
            if job is None:
                raise KeyError(job_id)
            if job.status != "queued" or job_id in self._threads or self._stopping:  # started meanwhile
                return job
            withheld = self._withheld.get(job_id)
            ctx = LocalJobContext(job, self.storage, self, withheld)
            self.storage.set_status(job_id, "running", expect=frozenset({"queued"}))
            self.storage.add_event(job_id, lifecycle_event(job.kind, "running"), f"{job.kind} job started",
                                   {"executor": job.executor})
            if withheld is None and secret_values(job.body):
                self.storage.add_event(job_id, "job.secrets.unavailable", _SECRETS_LOST, {}, level="warning")
            thread = threading.Thread(target=self._run, args=(executor, ctx), name=f"job-{job_id}", daemon=True)
            self._contexts[job_id] = ctx
            self._threads[job_id] = thread
            thread.start()
        refreshed = self.storage.get_job(job_id)
        assert refreshed is not None
        return refreshed

    def _run(self, executor: Executor, ctx: LocalJobContext) -> None:
        try:
            self._run_to_end(executor, ctx)
        except StoreClosed:
            # the backend stopped and closed its store while this job was still ending (``shutdown`` waits
            # a few seconds, then records the job as stopped); the late writes have nowhere to go
            log.debug("job %s ended after its backend's store was closed", ctx.job_id)

    def _run_to_end(self, executor: Executor, ctx: LocalJobContext) -> None:
        try:
            executor.run(ctx)
        except Exception as exc:  # an executor bug must fail the job, not the server
            if ctx.cancelled.is_set():
                self._finish_cancelled(ctx)
            else:
                detail = f"{type(exc).__name__}: {exc}"
                self._finish(ctx, "failed", error=detail, data={
                    "error": detail, "traceback": traceback.format_exc(limit=20)})
        else:
            if ctx.cancelled.is_set():
                self._finish_cancelled(ctx)
            else:
                self._finish(ctx, "succeeded")

    def _finish_cancelled(self, ctx: LocalJobContext) -> None:
        if self._stopping and not ctx.cancel_requested:
            self._finish(ctx, "failed", error=_STOPPED, data={"error": "backend_stopped"})
        else:
            self._finish(ctx, "cancelled")

    def _finish(self, ctx: LocalJobContext, status: str, *, error: str | None = None,
                data: dict[str, Any] | None = None) -> None:
        with self._lock:
            if ctx.closed.is_set():
                return
            ctx.closed.set()
            self._contexts.pop(ctx.job_id, None)
            self._threads.pop(ctx.job_id, None)
            self._withheld.pop(ctx.job_id, None)
        self.policies.remove_job(ctx.job_id)
        if error is not None:
            error, data = ctx.scrub(error, data)
        algorithm = prompt_learning_algorithm(ctx.body) if ctx.kind == "prompt_learning" else None
        if status == "succeeded":
            self.before_terminal_event(ctx)
            for name in ending_events(ctx.kind, algorithm, "completed"):
                self.storage.add_event(ctx.job_id, name, f"{ctx.kind} job succeeded", {"status": "succeeded"})
        elif status == "failed":
            self.storage.add_event(ctx.job_id, lifecycle_event(ctx.kind, "failed"), f"Job failed: {error}",
                                   data, level="error")
            for name in ending_events(ctx.kind, algorithm, "failed"):
                self.storage.add_event(ctx.job_id, name, f"{ctx.kind} job failed", {"status": "failed"},
                                       level="error")
        elif status == "cancelled":
            self.storage.add_event(ctx.job_id, lifecycle_event(ctx.kind, "cancelled"), "Job cancelled",
                                   {}, level="warning")
        self.storage.set_status(ctx.job_id, status, error=error, expect=frozenset({"running"}))
        self.status_reads.forget(ctx.job_id)

    def cancel(self, job_id: str) -> JobRecord:
        """Cancel a job: queued -> cancelled now; running -> ``ctx.cancelled`` set, cancelled when it returns.

        An executor that ignores the flag for ``cancel_grace_seconds`` is abandoned and the job is
        finalised as cancelled anyway (its later writes are dropped).
        """
        job = self.storage.get_job(job_id)
        if job is None:
            raise KeyError(job_id)
        with self._lock:  # start() moves queued -> running under the same lock
            job = self.storage.get_job(job_id)
            if job is not None and job.status == "queued":
                self.storage.add_event(job_id, lifecycle_event(job.kind, "cancelled"),
                                       "Job cancelled before it started", {}, level="warning")
                self.storage.set_status(job_id, "cancelled", expect=frozenset({"queued"}))
                self._withheld.pop(job_id, None)
        if job is not None and job.status == "running":
            self.storage.request_cancel(job_id)
            with self._lock:
                ctx = self._contexts.get(job_id)
            if ctx is not None and not ctx.cancelled.is_set():
                ctx.cancel_requested = True
                ctx.cancelled.set()
                timer = threading.Timer(self.cancel_grace_seconds, self._finish, args=(ctx, "cancelled"))
                timer.daemon = True
                timer.start()
        refreshed = self.storage.get_job(job_id)
        assert refreshed is not None
        return refreshed

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop every running job (they end ``failed``: the server went away) and wait for the workers."""
        with self._lock:
            self._stopping = True
            contexts = list(self._contexts.values())
            threads = list(self._threads.values())
        for ctx in contexts:
            ctx.cancelled.set()
        for thread in threads:
            thread.join(timeout=timeout / max(len(threads), 1))
        for ctx in contexts:
            self._finish(ctx, "failed", error=_STOPPED, data={"error": "backend_stopped"})
        self.model_servers.stop_all()
