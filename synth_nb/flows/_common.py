"""Pieces every flow's ``build_plan`` shares: config errors, paths, models, keys, warnings."""

from __future__ import annotations

import copy
import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from synth_nb.backend import resolve_backend
from synth_nb.errors import ConfigError, OverrideError
from synth_nb.flows import catalogue
from synth_nb.flows.base import ConfigLike, Flow
from synth_nb.flows.overrides import Overrides
from synth_nb.secrets import SecretBundle

__all__ = [
    "absolute_path",
    "backend_for",
    "check_experimental",
    "config_error",
    "fresh_idempotency_key",
    "idempotency_for",
    "resolve_data_path",
    "section",
    "start_warnings",
]


def config_error(config: ConfigLike, key: str, message: str, hint: str | None = None) -> ConfigError:
    """A ``ConfigError`` pointing at ``key`` (file and line when the config knows them)."""
    line = None
    line_of = getattr(config, "line_of", None)
    if callable(line_of):
        try:
            line = line_of(key)
        except Exception:  # noqa: BLE001 - a missing line number must not hide the real problem
            line = None
    return ConfigError(message, path=getattr(config, "path", None), key=key, line=line, hint=hint)


def section(raw: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A deep copy of table ``name`` (``{}`` when absent or not a table)."""
    value = raw.get(name)
    return copy.deepcopy(value) if isinstance(value, dict) else {}


def backend_for(overrides: Overrides, environ: Mapping[str, str] | None = None) -> str:
    """Resolved backend URL (``"local"`` is kept as-is: the caller starts the embedded backend)."""
    if overrides.backend == "local":
        return "local"
    return resolve_backend(overrides.backend, os.environ if environ is None else environ)


def fresh_idempotency_key() -> str:
    return f"synth-nb-{uuid.uuid4().hex}"


def idempotency_for(overrides: Overrides) -> str:
    return overrides.idempotency or fresh_idempotency_key()


def absolute_path(path: Path) -> Path:
    """``path`` with symlinks resolved; a symlink loop is left for the read to report (with the file's name)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def resolve_data_path(config: ConfigLike, value: str, warnings: list[str], what: str) -> Path:
    """Resolve a path written in the config: relative to the config's folder first.

    synth-ai 0.2.24 resolved dataset paths against the working directory; when only that location exists
    it is used, with a warning saying so.
    """
    path = Path(value).expanduser()
    if path.is_absolute():
        return path
    base = absolute_path(Path(config.path)).parent if getattr(config, "path", None) else Path.cwd()
    beside = absolute_path(base / path)
    if beside.exists():
        return beside
    from_cwd = absolute_path(Path.cwd() / path)
    if from_cwd.exists():
        warnings.append(f"{what} {value!r} was found relative to the working directory ({from_cwd}), "
                        f"not to the config's folder ({base})")
        return from_cwd
    return beside


def _allow_experimental(overrides: Overrides, secrets: SecretBundle) -> bool:
    if overrides.allow_experimental is not None:
        return overrides.allow_experimental
    return (secrets.setting("SDK_EXPERIMENTAL") or "").strip() == "1"


def check_experimental(config: ConfigLike, model: str, key: str, overrides: Overrides,
                       secrets: SecretBundle) -> None:
    """Experimental base models need ``--allow-experimental`` or ``SDK_EXPERIMENTAL=1``."""
    env = {"SDK_EXPERIMENTAL_MODELS": secrets.setting("SDK_EXPERIMENTAL_MODELS") or ""}
    if catalogue.is_experimental(model, env) and not _allow_experimental(overrides, secrets):
        message = f"model {model!r} is experimental and disabled"
        hint = "pass --allow-experimental or set SDK_EXPERIMENTAL=1"
        if overrides.model is not None:
            raise OverrideError(f"--model {model!r}: {message} ({hint})", field="model")
        raise config_error(config, key, message, hint)


def start_warnings(flow: Flow, config: ConfigLike, overrides: Overrides) -> list[str]:
    """The plan's first warnings: the config's own, then one per override the flow ignores."""
    out = list(getattr(config, "warnings", None) or [])
    out.extend(overrides.ignored_by(flow))
    return out
