"""Find training TOMLs under a folder for the wizard's picker and for ``train`` without ``--config``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from synth_nb.config._source import format_key, read_toml_file
from synth_nb.config.detect import detect_flow
from synth_nb.config.loader import validate_config
from synth_nb.errors import ConfigError
from synth_nb.flows.registry import get_flow

__all__ = ["DiscoveredConfig", "discover_configs"]

_SKIP_DIRS = {"node_modules", "site-packages", "dist-packages", "__pycache__", "venv"}
_MAX_BYTES = 2_000_000
#: the record a job's bundle folder (``results/<job>/``) holds beside its copy of the config
#: (``synth_nb.pipeline.bundle.BUNDLE_FILE``); those copies are a run's record, not configs to pick
BUNDLE_RECORD = "run.json"


@dataclass(frozen=True)
class DiscoveredConfig:
    """One candidate TOML; ``flow`` is ``None`` when it is not a (readable) training config."""

    path: Path
    flow: str | None
    algorithm: str | None
    valid: bool
    error: str | None
    #: what validation warned about (unknown keys with "did you mean", notes); empty when invalid
    warnings: tuple[str, ...] = ()

    @property
    def is_training_config(self) -> bool:
        return self.flow is not None


def _skip_dir(parent: str, name: str) -> bool:
    return (name.startswith(".") or name in _SKIP_DIRS
            or os.path.exists(os.path.join(parent, name, "pyvenv.cfg")))


def discover_configs(folder: str | Path, *, max_files: int = 2000) -> list[DiscoveredConfig]:
    """Every ``*.toml`` under ``folder`` (virtualenvs, node_modules, hidden and package dirs skipped),
    classified and validated, sorted by path. ``error`` is the first problem, if any; a config naming a
    file a submission needs that is not there (a missing dataset) is invalid too.

    A job's bundle folder (its config copy beside ``run.json``) is left out: the list would otherwise grow
    with every run (``synth-nb rerun`` / ``fork`` take a bundle).
    """
    root = Path(folder)
    found: list[Path] = []
    for parent, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not _skip_dir(parent, d))
        if BUNDLE_RECORD in files:
            continue
        found.extend(Path(parent) / f for f in files if f.endswith(".toml") and not f.startswith("."))
        if len(found) >= max_files:
            break
    return [_classify(p) for p in sorted(found)[:max_files]]


def _classify(path: Path) -> DiscoveredConfig:
    try:
        if path.stat().st_size > _MAX_BYTES:
            return DiscoveredConfig(path, None, None, False, "file too large for a training config")
        text, raw = read_toml_file(path)
    except (ConfigError, OSError) as exc:
        return DiscoveredConfig(path, None, None, False, str(exc))
    flow, algorithm = detect_flow(raw)
    if flow is None:
        return DiscoveredConfig(path, None, None, False, "not a training config")
    try:
        loaded = validate_config(raw, path=path, text=text)
    except ConfigError as exc:
        first = exc.problems[0] if exc.problems else exc
        return DiscoveredConfig(path, flow, algorithm, False, str(first))
    missing = get_flow(flow).missing_files(loaded)
    if missing:  # a missing dataset fails the submission: say so here, not after the questions
        problem = missing[0]
        key = format_key(problem.key)
        error = ConfigError(problem.message, path=path, key=key, line=loaded.line_of(key), hint=problem.hint)
        return DiscoveredConfig(path, flow, algorithm, False, str(error))
    return DiscoveredConfig(path, flow, algorithm, True, None, tuple(loaded.warnings))
