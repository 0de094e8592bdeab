"""``load_config``: read a TOML file, decide its flow, validate it, and keep positions for messages."""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from synth_nb.config._problems import pydantic_problems, unknown_keys
from synth_nb.config._source import KeyLines, format_key, parse_toml_text, read_toml_file
from synth_nb.config.detect import detect_flow, expected_tables_hint, not_a_training_config
from synth_nb.errors import ConfigError
from synth_nb.flows.registry import get_flow
from synth_nb.flows.schema import Problem

__all__ = ["LoadedConfig", "config_path", "load_config", "load_config_text", "validate_config"]

_TOML_SCALARS = (str, bool, int, float, _dt.datetime, _dt.date, _dt.time)
_INT64 = (-(2**63), 2**63 - 1)
#: deeper nesting is rejected: no real config comes close, and deep documents exhaust recursive code
MAX_DEPTH = 64
MAX_DOCUMENT_PROBLEMS = 20


@dataclass
class LoadedConfig:
    """A validated training config.

    ``raw`` is the file as written (plans send its values); ``model`` is the validated (and, for the
    deliberate fixes, normalised) pydantic model. ``raw`` and ``text`` may hold a key written in the TOML,
    so the repr leaves them out and masks secrets in the model.
    """

    path: Path
    flow: str
    algorithm: str | None
    raw: dict[str, Any] = field(repr=False)
    model: Any
    warnings: list[str] = field(default_factory=list)
    text: str = field(default="", repr=False)
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
        """Where the flow writes result files of this config's jobs (None when it writes none)."""
        return get_flow(self.flow).results_folder(self)


def config_path(given: str) -> Path:
    """A config path as typed: ``real.toml/`` (a file named like a folder) is refused, since ``Path`` would
    drop the slash and read the file, hiding a typo that changes which file was meant."""
    path = Path(given).expanduser()
    if given.endswith(("/", "\\")) and path.is_file():
        raise ConfigError(f"config path {given} ends with a slash, but names a file, not a folder",
                          hint=f"pass it without the trailing slash: {str(path)!r}")
    return path


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
    _check_document(raw, target, lines)
    name, algorithm = detect_flow(raw)
    if name is None:
        raise ConfigError(not_a_training_config(), path=target, hint=expected_tables_hint())
    flow = get_flow(name)
    data, notes = flow.normalise(raw)
    schema = flow.config_model
    try:
        model = schema.model_validate(data)
    except PydanticValidationError as exc:
        _raise(flow.label, target, lines, pydantic_problems(exc, schema, data))
    found = flow.check(model, data)
    problems = [p for p in found if not p.warning]
    if problems:
        _raise(flow.label, target, lines, problems)
    warnings = [*notes, *(p.message for p in found if p.warning)]
    for key, suggestion in unknown_keys(model):
        hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
        warnings.append(f"unknown key {format_key(key)}{hint} — {flow.unknown_key_fate(key)}")
    loaded = LoadedConfig(path=target, flow=name, algorithm=algorithm, raw=raw, model=model, warnings=warnings,
                          text=text, _lines=lines)
    loaded.warnings.extend(flow.config_notes(loaded))
    return loaded


def _raise(label: str, path: Path, lines: KeyLines, problems: list[Problem]) -> Any:
    errors = [
        ConfigError(p.message, path=path, key=format_key(p.key) or None, line=lines.line_of(p.key) if p.key else None,
                    hint=p.hint)
        for p in problems
    ]
    count = f"{len(errors)} problem" + ("s" if len(errors) != 1 else "")
    raise ConfigError(f"invalid {label + ' ' if label else ''}config ({count})", path=path, problems=errors)


def _check_document(raw: Any, path: Path, lines: KeyLines) -> None:
    """Reject values no schema should have to handle, wherever they sit (free tables included).

    Non-string keys, ``None`` and objects (tomllib never produces them), ``inf`` / ``nan`` (JSON cannot
    carry them), integers beyond TOML's 64-bit range and nesting deeper than ``MAX_DEPTH``. The walk is
    iterative, so a deep document cannot exhaust the stack.
    """
    if not isinstance(raw, dict):
        raise ConfigError("a config must be a table of keys", path=path, hint="pass the parsed TOML document")
    problems: list[Problem] = []
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), raw)]
    while stack and len(problems) < MAX_DOCUMENT_PROBLEMS:
        key, value = stack.pop()
        found = _value_problem(key, value)
        if found is not None:
            problems.append(found)
        elif isinstance(value, dict):
            stack.extend(((*key, k), v) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend(((*key, i), v) for i, v in reversed(list(enumerate(value))))
    if problems:
        _raise("", path, lines, problems)


def _value_problem(key: tuple[str | int, ...], value: Any) -> Problem | None:
    if len(key) > MAX_DEPTH:
        return Problem(key[:MAX_DEPTH], f"nested more than {MAX_DEPTH} levels deep",
                       "flatten the tables and arrays under this key")
    if isinstance(value, dict):
        bad = next((k for k in value if not isinstance(k, str)), None)
        if bad is not None:
            return Problem(key, f"key {bad!r} is not a string", "TOML keys are strings")
        return None
    if isinstance(value, list):
        return None
    if not isinstance(value, _TOML_SCALARS):
        return Problem(key, f"value of type {type(value).__name__} is not a TOML value",
                       "use a string, number, boolean, date, array or table")
    if isinstance(value, float) and not math.isfinite(value):
        return Problem(key, f"must be a finite number (got {value!r})", "inf and nan cannot be sent as JSON; "
                       "use a number")
    if isinstance(value, int) and not isinstance(value, bool) and not _INT64[0] <= value <= _INT64[1]:
        return Problem(key, "integer out of range (TOML integers are 64-bit)",
                       f"use a value between {_INT64[0]} and {_INT64[1]}")
    return None
