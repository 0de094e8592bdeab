"""``load_config``: read a TOML file, decide its flow, validate it, and keep positions for messages."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from synth_nb.config._pl_checks import check_prompt_learning, normalise_prompt_learning
from synth_nb.config._problems import pydantic_problems, unknown_keys
from synth_nb.config._source import KeyLines, format_key, parse_toml_text, read_toml_file
from synth_nb.config.detect import EXPECTED_TABLES_HINT, Flow, detect_flow
from synth_nb.config.prompt_learning import PromptLearningConfig
from synth_nb.config.rl import RlConfig, check_rl
from synth_nb.config.sft import SftConfig, check_sft
from synth_nb.config.shared import Problem
from synth_nb.errors import ConfigError

__all__ = ["DEFAULT_RESULTS_FOLDER", "LoadedConfig", "load_config", "load_config_text", "validate_config"]

DEFAULT_RESULTS_FOLDER = "results"

Checker = Callable[[Any, Mapping[str, Any]], tuple[list[Problem], list[str]]]
_SCHEMAS: dict[str, tuple[type[BaseModel], Checker]] = {
    "rl": (RlConfig, lambda cfg, raw: check_rl(cfg)),
    "sft": (SftConfig, lambda cfg, raw: check_sft(cfg)),
    "prompt_learning": (PromptLearningConfig, check_prompt_learning),
}
_TOML_SCALARS = (str, bool, int, float, _dt.datetime, _dt.date, _dt.time)


@dataclass
class LoadedConfig:
    """A validated training config.

    ``raw`` is the file as written; ``model`` is the validated (and, for the deliberate fixes,
    normalised) pydantic model whose ``model_dump(exclude_none=True)`` is what 0.2.24 would send.
    """

    path: Path
    flow: Flow
    algorithm: str | None
    raw: dict[str, Any]
    model: Any
    warnings: list[str] = field(default_factory=list)
    text: str = ""
    _lines: KeyLines | None = field(default=None, repr=False)

    def line_of(self, dotted_key: str, *, exact: bool = False) -> int | None:
        """Line where ``dotted_key`` (``"a.b[0].c"`` or ``"a.b.0.c"``) is written in the file.

        Without ``exact``, a key that is not written falls back to its nearest enclosing table.
        """
        if self._lines is None:
            self._lines = KeyLines(self.text)
        return self._lines.line_of(dotted_key, exact=exact)

    @property
    def results_folder(self) -> Path | None:
        """Prompt learning only: where result files go (TOML-relative, default ``results``)."""
        if self.flow != "prompt_learning":
            return None
        folder = self.model.prompt_learning.results_folder or self.model.results_folder or DEFAULT_RESULTS_FOLDER
        target = Path(folder).expanduser()
        return target if target.is_absolute() else (self.path.parent / target).resolve()


def load_config(path: str | Path) -> LoadedConfig:
    """Read, parse and validate a training TOML; every failure is a :class:`ConfigError`."""
    target = Path(path)
    text, raw = read_toml_file(target)
    return validate_config(raw, path=target, text=text)


def load_config_text(text: str, path: str | Path = "config.toml") -> LoadedConfig:
    """Like :func:`load_config` for TOML text that is not (yet) a file, e.g. from the wizard."""
    target = Path(path)
    return validate_config(parse_toml_text(text, target), path=target, text=text)


def validate_config(raw: Any, *, path: str | Path | None = None, text: str = "") -> LoadedConfig:
    """Validate an already parsed document (``text`` is only used for line numbers)."""
    target = Path(path) if path is not None else Path("config.toml")
    lines = KeyLines(text)
    _check_toml_shape(raw, (), target, lines)
    flow, algorithm = detect_flow(raw)
    if flow is None:
        raise ConfigError("not a training config: cannot tell whether it is RL, SFT or prompt learning",
                          path=target, hint=EXPECTED_TABLES_HINT)
    notes: list[str] = []
    data = raw
    if flow == "prompt_learning":
        data, notes = normalise_prompt_learning(raw)
    schema, checker = _SCHEMAS[flow]
    try:
        model = schema.model_validate(data)
    except PydanticValidationError as exc:
        _raise(flow, target, lines, pydantic_problems(exc, schema, data))
    problems, warnings = checker(model, data)
    if problems:
        _raise(flow, target, lines, problems)
    for key, suggestion in unknown_keys(model):
        dotted = format_key(key)
        hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
        warnings.append(f"unknown key {dotted}{hint} — {_unknown_key_fate(flow, key)}")
    loaded = LoadedConfig(path=target, flow=flow, algorithm=algorithm, raw=raw, model=model,
                          warnings=[*notes, *warnings], text=text, _lines=lines)
    if isinstance(model, PromptLearningConfig) and not (model.prompt_learning.results_folder
                                                          or model.results_folder):
        loaded.warnings.append(
            f"no results_folder in [prompt_learning]: result files will be written to {loaded.results_folder} "
            "(set prompt_learning.results_folder to choose another folder)")
    return loaded


def _unknown_key_fate(flow: str, key: tuple[str | int, ...]) -> str:
    if flow == "rl":
        return "removed before sending ([smoke] is local-only)" if key[0] == "smoke" else \
            "not checked by synth-nb; sent to the backend as written"
    if flow == "prompt_learning":
        return "not checked by synth-nb; sent to the backend as written" if key[0] == "prompt_learning" else \
            "ignored (only [prompt_learning] is sent)"
    if key[:2] == ("hyperparameters", "parallelism"):
        return "not checked by synth-nb; sent as written in hyperparameters.parallelism"
    return "ignored (not sent)"


def _raise(flow: str, path: Path, lines: KeyLines, problems: list[Problem]) -> Any:
    errors = [
        ConfigError(p.message, path=path, key=format_key(p.key) or None, line=lines.line_of(p.key) if p.key else None,
                    hint=p.hint)
        for p in problems
    ]
    count = f"{len(errors)} problem" + ("s" if len(errors) != 1 else "")
    raise ConfigError(f"invalid {flow.replace('_', ' ')} config ({count})", path=path, problems=errors)


def _check_toml_shape(value: Any, key: tuple[str | int, ...], path: Path, lines: KeyLines) -> None:
    """Reject documents that tomllib could not have produced (non-string keys, ``None``, objects)."""
    if isinstance(value, Mapping) or not key:
        if not isinstance(value, dict):
            raise ConfigError("a config must be a table of keys", path=path, hint="pass the parsed TOML document")
        for k, v in value.items():
            if not isinstance(k, str):
                raise ConfigError(f"key {k!r} is not a string", path=path, key=format_key(key) or None)
            _check_toml_shape(v, (*key, k), path, lines)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_toml_shape(item, (*key, i), path, lines)
    elif not isinstance(value, _TOML_SCALARS):
        raise ConfigError(f"value of type {type(value).__name__} is not a TOML value", path=path,
                          key=format_key(key), line=lines.line_of(key), hint="use a string, number, boolean, "
                          "date, array or table")
