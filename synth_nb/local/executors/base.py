"""The contract between the local backend and the executors that run its jobs.

The server owns HTTP, storage and the job lifecycle; an executor only turns a job's create-request body
into events, metrics and a result. ``run`` is called in a worker thread; it returns normally on success,
raises on failure, and must poll ``ctx.cancelled`` often (a few seconds at most) and return early when
it is set. Executors that need a process of their own (torch training) spawn it from ``run``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Executor", "JobContext", "PolicyHandler"]

#: an OpenAI-compatible chat-completions handler: request JSON in, response JSON out
PolicyHandler = Callable[[dict[str, Any]], dict[str, Any]]


class JobContext(Protocol):
    job_id: str
    #: "prompt_learning" | "sft" | "rl"
    kind: str
    #: the job's create-request body exactly as received
    body: dict[str, Any]
    #: a folder private to this job (checkpoints, artifacts)
    work_dir: Path
    #: set when the job is being cancelled
    cancelled: threading.Event
    #: the backend's own URL (no ``/api`` suffix); task apps can reach it on loopback
    backend_url: str
    #: the task-app key (ENVIRONMENT_API_KEY) the backend holds, for jobs whose body carries none (RL)
    environment_api_key: str | None
    #: settings the server was started with for this job's executor (``executor_options[name]``)
    options: dict[str, Any]

    def emit(self, type: str, message: str = "", data: dict[str, Any] | None = None,
             level: str = "info") -> None:
        """Append an event (seq assigned by storage). Thread-safe."""

    def metric(self, name: str, step: int, value: float, data: dict[str, Any] | None = None) -> None:
        """Append a metric point. Thread-safe."""

    def update_result(self, **fields: Any) -> None:
        """Merge fields into the job's status document (best_score, best_prompt, fine_tuned_model…)."""

    def file_path(self, file_id: str) -> Path:
        """Local path of an uploaded file (raises KeyError if unknown)."""

    def serve_policy(self, handler: PolicyHandler) -> str:
        """Expose ``handler`` as an OpenAI-compatible endpoint on the backend; returns its inference URL.

        Task apps call ``{url}/chat/completions`` (the backend also accepts ``{url}/v1/chat/completions``).
        The route is removed when the job ends.
        """

    # Optional (read with ``getattr``; contexts without a backend have none): ``task_app_in_process(url)``
    # returns ``/rollout`` of the task app at ``url`` as a call in this process (``examples.contract.
    # RolloutAnswer``) when the backend serves that app itself, else None: the executor then uses HTTP.


class Executor(Protocol):
    #: "replay" | "gepa" | "mipro" | "sft" | "rl"
    name: str

    def validate(self, kind: str, body: dict[str, Any], options: dict[str, Any] | None = None) -> None:
        """Raise ExecutorInputError at create time for bodies this executor cannot run.

        ``options`` are the server's settings for this executor (what ``JobContext.options`` holds later).
        """

    def run(self, ctx: JobContext) -> None:
        """Run the job to completion (see module docstring)."""
