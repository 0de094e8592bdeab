"""Executors run jobs for the local backend; one module per kind of job, imported only when used.

``EXECUTORS`` maps an executor name to ``"module:Class"``; ``choose_executor`` picks one per job from its
create-request body, ``load_executor`` imports it (raising ``ExecutorUnavailable`` -> HTTP 501 when the
module or one of its dependencies is not installed).
"""

from __future__ import annotations

import importlib
from typing import Any

from synth_nb.local.errors import ExecutorInputError, ExecutorUnavailable
from synth_nb.local.executors.base import Executor

__all__ = ["EXECUTORS", "choose_executor", "load_executor", "prompt_learning_algorithm"]

EXECUTORS: dict[str, str] = {
    "gepa": "synth_nb.local.executors.prompt_learning.gepa:GepaExecutor",
    "mipro": "synth_nb.local.executors.prompt_learning.mipro:MiproExecutor",
    "sft": "synth_nb.local.executors.sft:SftExecutor",
    "rl": "synth_nb.local.executors.rl:RlExecutor",
    "replay": "synth_nb.local.executors.replay:ReplayExecutor",
}


def _metadata(body: dict[str, Any]) -> dict[str, Any]:
    meta = body.get("metadata")
    return meta if isinstance(meta, dict) else {}


def prompt_learning_algorithm(body: dict[str, Any]) -> str | None:
    """``gepa``/``mipro`` from the body's ``algorithm`` or ``config_body.prompt_learning.algorithm``."""
    algorithm = body.get("algorithm")
    if not algorithm:
        config = body.get("config_body")
        section = config.get("prompt_learning") if isinstance(config, dict) else None
        algorithm = section.get("algorithm") if isinstance(section, dict) else None
    return algorithm.lower() if isinstance(algorithm, str) else None


def choose_executor(kind: str, body: dict[str, Any], default: str | None = None) -> str:
    """Executor name for a job: ``metadata.local_executor`` › server default › the job's own kind."""
    requested = _metadata(body).get("local_executor")
    if requested is not None:
        if not isinstance(requested, str) or requested not in EXECUTORS:
            raise ExecutorInputError(
                f"metadata.local_executor must be one of {sorted(EXECUTORS)}, got {requested!r}")
        return requested
    if default:
        return default
    if kind == "prompt_learning":
        algorithm = prompt_learning_algorithm(body)
        if algorithm not in ("gepa", "mipro"):
            raise ExecutorInputError(f"algorithm must be 'gepa' or 'mipro', got {algorithm!r}")
        return algorithm
    return kind


def load_executor(name: str) -> Executor:
    """Import and instantiate executor ``name`` (one instance per job)."""
    target = EXECUTORS.get(name)
    if target is None:
        raise ExecutorUnavailable(f"unknown executor {name!r}; known: {sorted(EXECUTORS)}")
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise ExecutorUnavailable(
                f"the local '{name}' executor is not available in this version of synth-nb "
                f"({module_name} is missing); use a replay job (metadata.local_executor = \"replay\") "
                "or a remote backend") from None
        raise ExecutorUnavailable(
            f"the local '{name}' executor needs the Python package {exc.name!r}, which is not installed "
            "(install synth-nb with the 'train' or 'offline-policy' extra)") from None
    executor_class = getattr(module, class_name, None)
    if executor_class is None:
        raise ExecutorUnavailable(f"{module_name} does not define {class_name}")
    executor: Executor = executor_class()
    return executor
