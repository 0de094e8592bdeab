"""A `Plan` is everything a submission will send, built before anything is sent.

Each flow (``synth_nb.flows.get_flow(name).build_plan``) turns a validated config, overrides and secrets
into a Plan; ``synth_nb.job.submit`` executes its steps in order; the CLI and the wizard show
``plan.preview()``. Bodies keep real values (they are what gets sent); every preview masks secrets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import SecretStr

from synth_nb.contract import FlowEndpoints
from synth_nb.errors import ConfigError
from synth_nb.secrets._mask import mask, mask_userinfo
from synth_nb.secrets.redact import is_secret_key, redact

__all__ = ["Plan", "Step", "TaskApp", "mask_payload", "resolve_refs"]

StepKind = Literal["json", "upload", "check"]

@dataclass(frozen=True)
class Step:
    """One HTTP request of a plan.

    ``kind="upload"`` steps carry the local file in ``upload`` and a multipart ``body`` of form fields;
    ``kind="check"`` steps are preflight requests whose failure stops the submission (e.g. RL task-app
    verification). ``path`` is relative to the backend base URL (which already ends in ``/api``).
    """

    method: str
    path: str
    body: Any = field(default=None, repr=False)  # may hold secrets; use Plan.preview() to show it
    kind: StepKind = "json"
    description: str = ""
    upload: Path | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: store the response's ``id`` under this name; later bodies refer to it as ``{"$ref": name}``
    ref: str | None = None


@dataclass(frozen=True)
class TaskApp:
    """The task app a job will be scored by: checked from this machine before the job is created."""

    url: str
    api_key: SecretStr | None = field(default=None, repr=False)


@dataclass
class Plan:
    """The ordered steps of one job submission, plus what a preview needs to explain them."""

    flow: str
    algorithm: str | None
    steps: list[Step] = field(repr=False)  # bodies may hold secrets; use preview()
    #: the backend paths of the flow that built it: the created job is followed and cancelled through them
    endpoints: FlowEndpoints = field(kw_only=True, repr=False)
    config_path: Path | None = None
    backend_url: str = field(default="", repr=False)  # may hold credentials; display_url() shows it
    idempotency_key: str | None = None
    warnings: list[str] = field(default_factory=list)
    #: where result files (prompt-learning ``summary.md`` and curve) are written after the job ends
    results_folder: Path | None = None
    #: secret values that must never be shown; used by ``preview`` on top of key-name masking
    secrets: list[SecretStr] = field(default_factory=list, repr=False)
    #: the task app to health-check before submitting (prompt learning; RL's check is a backend step)
    task_app: TaskApp | None = None

    def __repr__(self) -> str:
        """One line: the flow, the config file's name and the requests (``preview()`` shows their bodies)."""
        flow = f"{self.flow}/{self.algorithm}" if self.algorithm else self.flow
        config = f" from {self.config_path.name}" if self.config_path else ""
        requests = ", ".join(f"{st.method} {st.path}" for st in self.steps)
        return f"Plan({flow}{config}: {requests})"

    def preview(self) -> dict[str, Any]:
        """The public ``--dry-run --json`` document: ``{"flow", "algorithm", "steps": [...]}``, masked."""
        values = [s.get_secret_value() for s in self.secrets if s.get_secret_value()]
        return {
            "flow": self.flow,
            "algorithm": self.algorithm,
            "steps": [
                {"method": st.method, "path": st.path, "body": mask_payload(st.body, values, shapes=True)}
                for st in self.steps
            ],
        }

    def preview_json(self, indent: int = 2) -> str:
        return json.dumps(self.preview(), indent=indent, ensure_ascii=False)

    @property
    def create_step(self) -> Step:
        """The step that creates the job (the last JSON POST that is not a start call)."""
        for st in reversed(self.steps):
            if st.kind == "json" and st.method == "POST" and not st.path.endswith("/start"):
                return st
        raise ConfigError(f"the {self.flow} plan has no job-creation step (a JSON POST other than .../start); "
                          "nothing would create a job", path=self.config_path)


def mask_payload(value: Any, secret_values: list[str] | None = None, *, shapes: bool = False) -> Any:
    """Deep-copy ``value`` masking the strings under secret-named keys (``secrets.redact.is_secret_key``:
    ``api_key``, ``auth``, ``authorization``, ``credentials``...) and every known secret in any string.

    ``shapes``: also key-shaped strings wherever they sit (``sk-…``, ``Bearer …``, long random tokens), for
    what a config holds (plan previews); not for a backend's documents, whose ids and digests look the same.
    """
    secret_values = sorted([v for v in (secret_values or []) if v], key=len, reverse=True)

    def walk(v: Any, key: str | None) -> Any:
        if isinstance(v, dict):
            return {k: walk(x, str(k)) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [walk(x, key) for x in v]
        if isinstance(v, SecretStr):
            return mask(v)
        if isinstance(v, str):
            if key is not None and is_secret_key(key):
                return mask(v)
            for raw in secret_values:
                if raw in v:
                    v = v.replace(raw, mask(raw))
            return redact(v) if shapes else mask_userinfo(v)
        return v

    return walk(value, None)


def resolve_refs(value: Any, refs: dict[str, str]) -> Any:
    """Replace every ``{"$ref": name}`` in a body by ``refs[name]`` (ids returned by earlier steps)."""
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            name = value["$ref"]
            if name not in refs:
                stored = ", ".join(refs) or "none"
                raise ConfigError(f"a plan step refers to {json.dumps(value)}, but no earlier step stored an id "
                                  f"under that name (stored: {stored})")
            return refs[name]
        return {k: resolve_refs(v, refs) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_refs(v, refs) for v in value]
    return value
