"""Command-line / wizard overrides and their precedence.

Precedence (highest first):

* backend: ``--backend`` > process ``SYNTH_BACKEND_OVERRIDE`` > hosted default (``synth_nb.backend``);
* RL task URL: ``--task-url`` > ``TASK_APP_URL`` > ``[services].task_url``;
* prompt-learning task URL: ``--task-url`` > ``[prompt_learning].task_app_url`` > ``TASK_APP_URL``;
* model: ``--model`` > the config (RL ``[model]``/``[policy]``, SFT ``[job].model``);
* dataset (SFT): ``--dataset`` > ``[job].data`` / ``[job].data_path``;
* experimental models: ``--allow-experimental`` / ``--no-allow-experimental`` > ``SDK_EXPERIMENTAL=1``;
* idempotency key (sent with every job-creation request): ``--idempotency`` > a fresh key per plan.

An override a flow does not use is reported as a plan warning (``ignored_by``), never dropped silently.
A rejected value is quoted masked when it looks like a key or equals a secret in the environment (a key
pasted into the wrong flag must not be echoed back).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, field_validator
from pydantic import ValidationError as PydanticValidationError

from synth_nb.backend import url_problem
from synth_nb.config.redact import redact_value, shown
from synth_nb.errors import OverrideError
from synth_nb.secrets import SECRET_KEYS


class HonouredOverrides(Protocol):
    """What ``ignored_by`` reads of a flow (``synth_nb.flows.base.Flow`` has it)."""

    @property
    def label(self) -> str: ...

    @property
    def honoured_overrides(self) -> frozenset[str]: ...

    @property
    def ignored_overrides(self) -> Mapping[str, str]: ...

__all__ = ["Overrides", "check_multi_config", "shown_flag_value"]

_FLAG = {
    "backend": "--backend",
    "model": "--model",
    "dataset": "--dataset",
    "examples": "--examples",
    "task_url": "--task-url",
    "idempotency": "--idempotency",
    "allow_experimental": "--allow-experimental",
}


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
    def build(cls, **values: Any) -> Overrides:
        """Like the constructor, but invalid values raise ``OverrideError`` naming the flag."""
        try:
            return cls(**values)
        except PydanticValidationError as exc:
            problems, names = [], []
            for err in exc.errors():
                name = str(err["loc"][0]) if err.get("loc") else "?"
                names.append(name)
                flag = _FLAG.get(name, name)
                problems.append(f"{flag} {shown_flag_value(values.get(name))}: "
                                f"{err['msg'].removeprefix('Value error, ')}")
            raise OverrideError("invalid override: " + "; ".join(problems), field=names[0] if names else None) \
                from None

    @classmethod
    def from_args(cls, args: Any) -> Overrides:
        """Build from an argparse namespace made by ``synth_nb.pipeline.flags.add_train_arguments``."""
        return cls.build(**{name: getattr(args, name, None) for name in _FLAG})

    def given(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v is not None}

    def ignored_by(self, flow: HonouredOverrides) -> list[str]:
        """One warning per given override that ``flow`` does not use, with the flow's reason."""
        warnings = []
        for name in self.given():
            if name not in flow.honoured_overrides:
                why = flow.ignored_overrides.get(name, "")
                warnings.append(f"{_FLAG[name]} is ignored for {flow.label} jobs" + (f": {why}" if why else ""))
        return warnings


def check_multi_config(overrides: Overrides, flows: list[str]) -> None:
    """Overrides that cannot be shared by several jobs submitted together raise ``OverrideError``."""
    if overrides.idempotency is not None and len(flows) > 1:
        raise OverrideError(
            f"--idempotency {shown_flag_value(overrides.idempotency)} would be reused by {len(flows)} jobs, so the "
            "backend would treat them as one; submit the configs one at a time or drop --idempotency",
            field="idempotency",
        )
