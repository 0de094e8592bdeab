"""Shape checks on create-request bodies, before any executor sees them (422 with the dotted key).

Types are always checked; the fields a real run needs are required only when the job is not a replay
(a replay job only needs ``metadata``). Executors add their own checks in ``validate``.
"""

from __future__ import annotations

from typing import Any

from synth_nb.local.lifecycle import replay_speed_problem
from synth_nb.local.server.http import ApiError
from synth_nb.local.storage import Storage

__all__ = ["check_create_body"]


def _typed(body: dict[str, Any], key: str, kind: type | tuple[type, ...], label: str,
           required: bool = False) -> Any:
    value = body.get(key)
    if value is None:
        if required:
            raise ApiError(422, f"{label} is required")
        return None
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ApiError(422, f"{label} must be {_article(names)}, got {type(value).__name__}")
    if isinstance(value, str) and required and not value.strip():
        raise ApiError(422, f"{label} must not be empty")
    return value


def _article(name: str) -> str:
    nice = {"dict": "an object", "str": "a string", "list": "a list", "bool": "true or false",
            "int": "an integer", "float": "a number"}
    return " or ".join(nice.get(part, part) for part in name.split(" or "))


def _check_metadata(body: dict[str, Any]) -> None:
    meta = _typed(body, "metadata", dict, "metadata")
    if meta is None:
        return
    _typed(meta, "recording", str, "metadata.recording")
    speed = _typed(meta, "replay_speed", (int, float), "metadata.replay_speed")
    problem = replay_speed_problem(speed) if speed is not None else None
    if problem:
        raise ApiError(422, f"metadata.replay_speed {problem}")


def check_create_body(kind: str, body: dict[str, Any], storage: Storage, *, real_executor: bool) -> None:
    """Raise ``ApiError(422/404)`` for a body no executor could run."""
    _check_metadata(body)
    _typed(body, "auto_start", bool, "auto_start")
    if kind == "sft":
        _typed(body, "model", str, "model", required=real_executor)
        _typed(body, "hyperparameters", dict, "hyperparameters")
        _typed(body, "training_type", str, "training_type")
        key = "training_file_id" if "training_file_id" in body or "training_file" not in body else "training_file"
        file_id = _typed(body, key, str, key, required=real_executor)
        if file_id is not None and storage.get_file(file_id) is None:
            raise ApiError(422, f"{key} {file_id!r} is not a file on this backend; upload it with POST /api/files")
        validation = _typed(body, "validation_file", str, "validation_file")
        if validation is not None and storage.get_file(validation) is None:
            raise ApiError(422, f"validation_file {validation!r} is not a file on this backend")
    elif kind == "rl":
        data = _typed(body, "data", dict, "data")
        nested = data if data is not None else body
        label = "data." if data is not None else ""
        url = _typed(nested, "endpoint_base_url", str, label + "endpoint_base_url", required=real_executor)
        if url is not None and not url.startswith(("http://", "https://")):
            raise ApiError(422, f"{label}endpoint_base_url must be an http(s) URL, got {url!r}")
        _typed(nested, "config", dict, label + "config")
        _typed(body, "compute", dict, "compute")
    else:
        algorithm = _typed(body, "algorithm", str, "algorithm")
        if algorithm is not None and algorithm.lower() not in ("gepa", "mipro"):
            raise ApiError(422, f"algorithm must be 'gepa' or 'mipro', got {algorithm!r}")
        config = _typed(body, "config_body", dict, "config_body", required=real_executor)
        if config is not None:
            _typed(config, "prompt_learning", dict, "config_body.prompt_learning", required=real_executor)
        _typed(body, "overrides", dict, "overrides")
