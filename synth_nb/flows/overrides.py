"""Command-line / wizard overrides and the precedence rules of spec §5.

Precedence (highest first):

* backend: ``--backend`` > process ``SYNTH_BACKEND_OVERRIDE`` > hosted default (``synth_nb.backend_target``);
* RL task URL: ``--task-url`` > ``TASK_APP_URL`` > ``[services].task_url``;
* prompt-learning task URL: ``--task-url`` > ``[prompt_learning].task_app_url`` > ``TASK_APP_URL``;
* model: ``--model`` > the config (RL ``[model]``/``[policy]``, SFT ``[job].model``);
* dataset (SFT): ``--dataset`` > ``[job].data`` / ``[job].data_path``;
* experimental models: ``--allow-experimental`` / ``--no-allow-experimental`` > ``SDK_EXPERIMENTAL=1``;
* idempotency key (sent with every job-creation request): ``--idempotency`` > a fresh key per plan.

An override a flow does not use is reported as a plan warning (``ignored_by``), never dropped silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator
from pydantic import ValidationError as PydanticValidationError

from synth_nb.errors import OverrideError

__all__ = ["FLOW_OVERRIDES", "Overrides", "check_multi_config"]

#: which overrides each flow honours (``backend`` and ``allow_experimental`` are handled for all flows)
FLOW_OVERRIDES: dict[str, frozenset[str]] = {
    "rl": frozenset({"backend", "model", "task_url", "idempotency", "allow_experimental"}),
    "sft": frozenset({"backend", "model", "dataset", "examples", "idempotency", "allow_experimental"}),
    "prompt_learning": frozenset({"backend", "task_url", "idempotency"}),
}

_FLAG = {
    "backend": "--backend",
    "model": "--model",
    "dataset": "--dataset",
    "examples": "--examples",
    "task_url": "--task-url",
    "idempotency": "--idempotency",
    "allow_experimental": "--allow-experimental",
}

_WHY_IGNORED = {
    ("prompt_learning", "model"): "set [prompt_learning.policy].model in the config instead",
    ("prompt_learning", "allow_experimental"): "prompt learning does not train a Qwen base model",
    ("prompt_learning", "dataset"): "prompt learning reads its data through the task app",
    ("prompt_learning", "examples"): "prompt learning reads its data through the task app",
    ("rl", "dataset"): "RL collects its data from the task app",
    ("rl", "examples"): "RL collects its data from the task app",
    ("sft", "task_url"): "SFT does not use a task app",
}


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
        if value is not None and value != "local" and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http(s) URL or 'local'")
        return value

    @field_validator("task_url")
    @classmethod
    def _task_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http(s) URL such as http://127.0.0.1:8102")
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
            problems = []
            for err in exc.errors():
                name = str(err["loc"][0]) if err.get("loc") else "?"
                flag = _FLAG.get(name, name)
                problems.append(f"{flag} {values.get(name)!r}: {err['msg'].removeprefix('Value error, ')}")
            raise OverrideError("invalid override: " + "; ".join(problems)) from None

    @classmethod
    def from_args(cls, args: Any) -> Overrides:
        """Build from an argparse namespace made by ``synth_nb.cli.args.add_train_arguments``."""
        return cls.build(**{name: getattr(args, name, None) for name in _FLAG})

    def given(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v is not None}

    def ignored_by(self, flow: str) -> list[str]:
        """One warning per given override that ``flow`` does not use."""
        honoured = FLOW_OVERRIDES[flow]
        label = flow.replace("_", " ")
        warnings = []
        for name in self.given():
            if name not in honoured:
                why = _WHY_IGNORED.get((flow, name), "")
                warnings.append(f"{_FLAG[name]} is ignored for {label} jobs" + (f": {why}" if why else ""))
        return warnings


def check_multi_config(overrides: Overrides, flows: list[str]) -> None:
    """Overrides that cannot be shared by several jobs submitted together raise ``OverrideError``."""
    if overrides.idempotency is not None and len(flows) > 1:
        raise OverrideError(
            f"--idempotency {overrides.idempotency!r} would be reused by {len(flows)} jobs, so the backend "
            "would treat them as one; submit the configs one at a time or drop --idempotency"
        )
