"""Command-line / wizard overrides and their precedence.

Precedence (highest first):

* backend: ``--backend`` > process ``SYNTH_BACKEND_OVERRIDE`` > hosted default (``synth_nb.backend``);
* RL task URL: ``--task-url`` > ``TASK_APP_URL`` > ``[services].task_url``;
* prompt-learning task URL: ``--task-url`` > ``[prompt_learning].task_app_url`` > ``TASK_APP_URL``;
* model: ``--model`` > the config (RL ``[model]``/``[policy]``, SFT ``[job].model``);
* dataset (SFT): ``--dataset`` > ``[job].data`` / ``[job].data_path``;
* experimental models: ``--allow-experimental`` / ``--no-allow-experimental`` > ``SDK_EXPERIMENTAL=1``;
* idempotency key (sent with every job-creation request): ``--idempotency`` > a fresh key per plan.

The flags come from one table (``synth_nb.flows.override_rows``); a flow's own rows (``Flow.override_rows``)
land in ``Overrides.flow_values`` and replace the config keys the row names (``apply_flow_values``).
An override a flow does not use is reported as a plan warning (``ignored_by``), never dropped silently.
A rejected value is quoted masked when it looks like a key or equals a secret in the environment (a key
pasted into the wrong flag must not be echoed back).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_serializer, model_validator
from pydantic import ValidationError as PydanticValidationError

from synth_nb.backend import url_problem
from synth_nb.errors import OverrideError
from synth_nb.flows.override_rows import CORE_ROWS, OverrideRow
from synth_nb.secrets import SECRET_KEYS
from synth_nb.secrets.redact import redact_value, shown


class HonouredOverrides(Protocol):
    """What ``ignored_by`` reads of a flow (``synth_nb.flows.base.Flow`` has it)."""

    @property
    def label(self) -> str: ...

    @property
    def honoured_overrides(self) -> frozenset[str]: ...

    @property
    def ignored_overrides(self) -> Mapping[str, str]: ...

    def honours(self, override: str) -> bool: ...

__all__ = ["Overrides", "apply_flow_values", "check_multi_config", "config_value", "shown_flag_value"]

_FLAG = {"backend": "--backend", **{row.name: row.flag for row in CORE_ROWS}}
#: the longest ``--idempotency`` key (it travels as a header)
MAX_IDEMPOTENCY = 255


def _flag(name: str) -> str:
    return _FLAG.get(name) or "--" + name.replace("_", "-")


def shown_flag_value(value: Any, secrets: Any = ()) -> str:
    """A flag value quoted for a message: masked if it looks like a key or is a known secret.

    Known secrets are ``secrets`` plus the process environment's ``SYNTH_API_KEY`` /
    ``ENVIRONMENT_API_KEY``, which are in place before any config is read.
    """
    environment = [part.strip() for name in SECRET_KEYS for part in os.environ.get(name, "").split(",")]
    return shown(value, [*secrets, *environment])


class Overrides(BaseModel):
    """Values that replace or complete what the config says. ``None`` means "not given"."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: str | None = None
    model: str | None = None
    dataset: Path | None = None
    examples: int | None = None
    task_url: str | None = None
    idempotency: str | None = None
    allow_experimental: bool | None = None
    #: values of the overrides a flow declares for itself (``Flow.override_rows``), by name
    flow_values: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _gather(cls, data: Any) -> Any:
        """A flow's own overrides arrive flat (``rollout_budget=40``, as flags and bundles have them)."""
        if not isinstance(data, Mapping):
            return data
        data = dict(data)
        own = dict(data.pop("flow_values", None) or {})
        for name in [n for n in data if n not in cls.model_fields]:
            own[name] = data.pop(name)
        return {**data, "flow_values": {k: v for k, v in own.items() if v is not None}}

    @model_serializer(mode="wrap")
    def _flat(self, handler: Any) -> Any:
        """Dumped flat, as given: a bundle's overrides rebuild the same ``Overrides``."""
        data = handler(self)
        if isinstance(data, dict):
            data.update(data.pop("flow_values", None) or {})
        return data

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """A key pasted into a flag is masked here too."""
        for name, value in super().__repr_args__():
            yield name, redact_value(name, value)

    @field_validator("backend", "model", "task_url", "idempotency", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip()
            if not value:
                raise ValueError("must not be empty")
            if not value.isprintable():  # U+200B pasted with a model id, a NUL, a line break
                raise ValueError("must not contain invisible or control characters")
        return value

    @field_validator("idempotency")
    @classmethod
    def _idempotency(cls, value: str | None) -> str | None:
        if value is not None and len(value) > MAX_IDEMPOTENCY:  # a header: servers refuse long ones
            raise ValueError(f"has at most {MAX_IDEMPOTENCY} characters, this one {len(value):,}")
        return value

    @field_validator("backend")
    @classmethod
    def _backend(cls, value: str | None) -> str | None:
        problem = url_problem(value) if value is not None and value != "local" else None
        if problem:
            raise ValueError(f"{problem} (expected an http(s) URL or 'local')")
        return value

    @field_validator("task_url")
    @classmethod
    def _task_url(cls, value: str | None) -> str | None:
        problem = url_problem(value) if value is not None else None
        if problem:
            raise ValueError(f"{problem} (expected an http(s) URL such as http://127.0.0.1:8102)")
        return value

    @field_validator("examples")
    @classmethod
    def _examples(cls, value: int | None) -> int | None:
        if value is not None and value <= 0:
            raise ValueError("must be a positive number of examples")
        return value

    @classmethod
    def build(cls, rows: Iterable[OverrideRow] = (), /, **values: Any) -> Overrides:
        """Like the constructor, but invalid values raise ``OverrideError`` naming the flag.

        ``rows``: the flows' own override rows, whose values are parsed here; any other name is refused.
        """
        own = {row.name: row for row in rows if row.name not in cls.model_fields}
        for name, value in list(values.items()):
            if name in cls.model_fields or value is None:
                continue
            row = own.get(name)
            if row is None:
                raise OverrideError(f"unknown override {_flag(name)}", field=name)
            try:
                values[name] = row.parse(value)
            except (TypeError, ValueError) as exc:
                raise OverrideError(f"invalid override: {row.flag} {shown_flag_value(value)}: {exc}",
                                    field=name) from None
        try:
            return cls(**values)
        except PydanticValidationError as exc:
            problems, names = [], []
            for err in exc.errors():
                name = str(err["loc"][0]) if err.get("loc") else "?"
                names.append(name)
                flag = _flag(name)
                problems.append(f"{flag} {shown_flag_value(values.get(name))}: "
                                f"{err['msg'].removeprefix('Value error, ')}")
            raise OverrideError("invalid override: " + "; ".join(problems), field=names[0] if names else None) \
                from None

    @classmethod
    def from_args(cls, args: Any, rows: Iterable[OverrideRow] = ()) -> Overrides:
        """Build from an argparse namespace made by ``synth_nb.pipeline.flags.add_train_arguments``."""
        rows = tuple(rows)
        names = [*_FLAG, *(row.name for row in rows)]
        return cls.build(rows, **{name: getattr(args, name, None) for name in names})

    def given(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v is not None}

    def ignored_by(self, flow: HonouredOverrides) -> list[str]:
        """One warning per given override that ``flow`` does not use, with the flow's reason."""
        warnings = []
        for name in self.given():
            if not flow.honours(name):
                why = flow.ignored_overrides.get(name, "") or ("it is another flow's" if name in self.flow_values
                                                                else "")
                warnings.append(f"{_flag(name)} is ignored for {flow.label} jobs" + (f": {why}" if why else ""))
        return warnings


def apply_flow_values(raw: Mapping[str, Any], rows: Iterable[OverrideRow], values: Mapping[str, Any]
                      ) -> tuple[dict[str, Any], list[str]]:
    """A copy of the config document ``raw`` with each given own override written at its row's key, and a
    warning for each that found no place.

    The key is the first of the row's ``keys`` already written, else the first whose table exists; a row
    whose tables the config has none of changes nothing (and says so).
    """
    out, warnings = copy.deepcopy(dict(raw)), []
    for row in rows:
        if values.get(row.name) is None:
            continue
        keys = next((k for k in row.keys if config_value(out, k) is not None), None) or next(
            (k for k in row.keys if isinstance(config_value(out, k[:-1]), dict)), None)
        if keys is None:
            tables = " or ".join(f"[{'.'.join(k[:-1])}]" for k in row.keys)
            warnings.append(f"{row.flag} changes nothing: this config has no {tables}")
            continue
        config_value(out, keys[:-1])[keys[-1]] = values[row.name]
    return out, warnings


def config_value(data: Any, keys: tuple[str, ...]) -> Any:
    """The value at ``keys`` in a config's raw tables (``("prompt_learning", "gepa", "budget")``), or None."""
    for key in keys:
        if not isinstance(data, Mapping) or key not in data:
            return None
        data = data[key]
    return data


def check_multi_config(overrides: Overrides, flows: list[str]) -> None:
    """Overrides that cannot be shared by several jobs submitted together raise ``OverrideError``."""
    if overrides.idempotency is not None and len(flows) > 1:
        raise OverrideError(
            f"--idempotency {shown_flag_value(overrides.idempotency)} would be reused by {len(flows)} jobs, so the "
            "backend would treat them as one; submit the configs one at a time or drop --idempotency",
            field="idempotency",
        )
