"""Shared by the SFT and RL executors: reading numeric settings and running a training worker."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from synth_nb.local.errors import ExecutorInputError, TrainingFailed, WorkerFailed
from synth_nb.local.executors.base import JobContext
from synth_nb.local.training.model_choice import ModelChoice
from synth_nb.local.training.process import TrainingWorker

__all__ = ["announce_model", "auto_threads", "local_settings", "number", "run_worker", "section"]


def section(body: dict[str, Any], *keys: str) -> dict[str, Any]:
    """``body[k1][k2]…`` as a dict, or {} when any level is missing or not a table."""
    node: Any = body
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def number(table: dict[str, Any], key: str, where: str, default: Any, *, kind: Callable[[Any], Any] = int,
           minimum: float | None = 0, strict: bool = True) -> Any:
    """A numeric setting; ExecutorInputError naming the dotted key when it has the wrong type or range."""
    value = table.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or (kind is int and not float(value).is_integer()):
        raise ExecutorInputError(f"{where}.{key} must be {'an integer' if kind is int else 'a number'}, got {value!r}")
    if minimum is not None and (value <= minimum if strict else value < minimum):
        raise ExecutorInputError(f"{where}.{key} must be {'>' if strict else '>='} {minimum}, got {value!r}")
    return kind(value)


def auto_threads() -> int:
    """Two torch threads on a quiet machine, one when it is busy: with other work on the same two cores,
    a second OpenMP thread makes the tiny model several times slower (measured), not faster."""
    cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0] >= cores - 0.5
    except OSError:
        busy = False
    return 1 if busy or cores < 2 else 2


def local_settings(body: dict[str, Any]) -> dict[str, Any]:
    """``metadata.local_training``: knobs that only exist locally (threads, memory limit, seed, tiny shape)."""
    table = section(body, "metadata", "local_training")
    where = "metadata.local_training"
    return {
        "threads": number(table, "threads", where, None) or auto_threads(),
        "memory_limit_mb": number(table, "memory_limit_mb", where, 4096, kind=float),
        "seed": number(table, "seed", where, 0, minimum=0, strict=False),
        "tiny": {k: number(table.get("tiny") or {}, k, f"{where}.tiny", None)
                 for k in ("n_layer", "n_embd", "n_head") if (table.get("tiny") or {}).get(k) is not None},
    }


def run_worker(ctx: JobContext, entry: str, config: dict[str, Any], *, prefix: str,
               policy_slots: int = 0) -> tuple[str, float]:
    """Run the worker; returns (status, peak RSS MB). A failure emits ``<prefix>.worker.error``, then raises."""
    worker = TrainingWorker(ctx, entry, config, policy_slots=policy_slots,
                            memory_limit_mb=float(config.get("memory_limit_mb", 4096)))
    try:
        status = worker.run()
    except WorkerFailed as exc:
        ctx.emit(f"{prefix}.worker.error", f"Training worker failed: {exc}",
                 {"error": str(exc), "detail": exc.detail[-4000:], "peak_rss_mb": round(worker.peak_rss_mb, 1)},
                 level="error")
        raise TrainingFailed(str(exc)) from None
    ctx.update_result(worker_peak_rss_mb=round(worker.peak_rss_mb, 1))
    return status, worker.peak_rss_mb


def announce_model(ctx: JobContext, prefix: str, choice: ModelChoice) -> dict[str, Any]:
    """Say which model the job trains and where it came from (``<prefix>.model.selected``, the job's first
    executor event: a folder, the Hugging Face cache, an earlier job, or the tiny stand-in and why); returns the
    choice as the worker's config reads it."""
    where = {"folder": "a model folder", "hub-cache": "the local Hugging Face cache",
             "artifact": "an earlier local job", "tiny": "the tiny stand-in"}[choice.source]
    data = {"kind": choice.kind, "source": choice.source, "requested": choice.requested,
            "path": str(choice.path) if choice.path else None, "reason": choice.reason}
    ctx.emit(f"{prefix}.model.selected", f"model: {choice.requested or '(none)'} from {where}: {choice.reason}", data)
    return data
