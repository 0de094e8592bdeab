"""RL plan: task-app verification, then ``POST /rl/jobs`` (auto-starts).

The job body matches synth-ai 0.2.24's builder for every config it accepts. Deliberate differences: a
config with no task URL anywhere is an error (0.2.24 sent the literal ``"placeholder"``); a ``[policy]``
table with ``model_name``/``source`` is enough when there is no ``[model]`` table (0.2.24 needed
``[model]`` or ``--model``); ``TASK_APP_URL`` overriding ``[services].task_url`` is reported.
"""

from __future__ import annotations

import copy
from typing import Any

from synth_nb.errors import OverrideError
from synth_nb.flows import catalogue
from synth_nb.flows._common import (
    backend_for,
    check_experimental,
    config_error,
    idempotency_for,
    section,
    start_warnings,
)
from synth_nb.flows.base import ConfigLike, Flow
from synth_nb.flows.overrides import Overrides, shown_flag_value
from synth_nb.flows.rl.jobs import JOBS
from synth_nb.plan import Plan, Step
from synth_nb.secrets import SecretBundle
from synth_nb.secrets.redact import redact

ENDPOINTS = JOBS.endpoints

VERIFY_PATH = "/rl/verify_task_app"

#: ``[policy]`` sampling defaults the 0.2.24 schema fills in (they end up in ``data.config.policy``)
_POLICY_DEFAULTS: dict[str, Any] = {"max_tokens": 512, "temperature": 0.7, "top_p": 0.95,
                                    "repetition_penalty": 1.0}

__all__ = ["ENDPOINTS", "VERIFY_PATH", "build_body", "build_plan", "resolve_task_url"]


def _clean(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def resolve_task_url(config: ConfigLike, overrides: Overrides, secrets: SecretBundle,
                     warnings: list[str]) -> str:
    """``--task-url`` > ``TASK_APP_URL`` > ``[services].task_url`` (0.2.24's order for RL)."""
    from_config = _clean(section(config.raw, "services").get("task_url"))
    env = secrets.settings.get("TASK_APP_URL")
    from_env = _clean(env.value) if env else None
    if overrides.task_url:
        if from_config and overrides.task_url != from_config:
            warnings.append(redact(f"--task-url {overrides.task_url} replaces [services].task_url {from_config}",
                                   secrets.values()))
        return overrides.task_url
    if from_env:
        if from_config and from_env != from_config and env is not None:
            warnings.append(f"TASK_APP_URL from {env.source} ({from_env}) replaces [services].task_url "
                            f"{from_config}")
        return from_env
    if from_config:
        return from_config
    raise config_error(config, "services.task_url", "no task app URL",
                       hint="set [services].task_url, export TASK_APP_URL or pass --task-url")


def _model_fields(config: ConfigLike, overrides: Overrides, secrets: SecretBundle) -> dict[str, str]:
    """``{"model": id}`` for a fine-tuned source / ``--model``, ``{"base_model": id}`` for a base model."""
    if overrides.model is not None:
        source, base, key = overrides.model, "", "model"
    else:
        table = section(config.raw, "model")
        key = "model"
        if not table:
            table, key = section(config.raw, "policy"), "policy"
            table.setdefault("source", None)
            table["base"] = table.get("model_name")
        source, base = (_clean(table.get("source")) or ""), (_clean(table.get("base")) or "")
        if bool(source) == bool(base):
            names = "[model].base or [model].source" if key == "model" else "[policy].model_name or [policy].source"
            raise config_error(config, f"{key}.base" if key == "model" else f"{key}.model_name",
                               f"set exactly one of {names}",
                               hint="base for a base model such as Qwen/Qwen3-4B, source for a fine-tuned id")
    chosen = source or base
    trained = catalogue.base_model_of(chosen) if source else catalogue.canonical_model(chosen)
    problem = None
    if trained is None:
        problem = (f"{shown_flag_value(chosen, secrets.values())} is not a supported model"
                   + ("" if source else " (base models only here)"))
    elif not catalogue.is_rl_capable(trained):
        problem = f"{trained!r} does not support RL training (see the model catalogue)"
    if problem:
        if overrides.model is not None:
            raise OverrideError(f"--model {problem}", field="model")
        raise config_error(config, f"{key}.source" if source else f"{key}.base", problem)
    assert trained is not None
    check_experimental(config, trained, f"{key}.base", overrides, secrets)
    if source:
        return {"model": catalogue.canonical_model(source) or source}
    return {"base_model": trained}


def build_body(config: ConfigLike, task_url: str, model_fields: dict[str, str], backend_url: str) -> dict[str, Any]:
    """The ``POST /rl/jobs`` body: the whole config (with 0.2.24's defaults) plus routing fields."""
    data = {k: v for k, v in copy.deepcopy(config.raw).items() if k != "smoke"}
    services: dict[str, Any] = data["services"] if isinstance(data.get("services"), dict) else {}
    services["task_url"] = task_url
    data["services"] = services
    compute: dict[str, Any] = data["compute"] if isinstance(data.get("compute"), dict) else {}
    topology: dict[str, Any] = compute["topology"] if isinstance(compute.get("topology"), dict) else {}
    topology.setdefault("reference_placement", "none")
    compute["topology"] = topology
    data["compute"] = compute
    reference = data.get("reference")
    if isinstance(reference, dict):
        reference.setdefault("placement", "none")
    else:
        data["reference"] = {"placement": "none"}
    policy = data.get("policy")
    if isinstance(policy, dict):
        for key, value in _POLICY_DEFAULTS.items():
            policy.setdefault(key, value)
    judge = data.get("judge")
    rubric = judge.get("rubric") if isinstance(judge, dict) else None
    if isinstance(rubric, dict):
        rubric.setdefault("enabled", False)
    return {
        "job_type": "rl",
        "compute": compute,
        "data": {"endpoint_base_url": task_url.rstrip("/"), "config": data, **model_fields},
        "tags": {"source": "train-cli"},
        "metadata": {"backend_base_url": backend_url},
    }


def build_plan(flow: Flow, config: ConfigLike, overrides: Overrides, secrets: SecretBundle) -> Plan:
    """Steps: ask the backend to verify the task app, then create the job (with an Idempotency-Key)."""
    warnings = start_warnings(flow, config, overrides)
    task_url = resolve_task_url(config, overrides, secrets, warnings)
    model_fields = _model_fields(config, overrides, secrets)
    backend_url = backend_for(overrides)
    key = idempotency_for(overrides)
    body = build_body(config, task_url, model_fields, backend_url)
    model = model_fields.get("model") or model_fields.get("base_model")
    steps = [
        Step("POST", VERIFY_PATH, {"endpoint_base_url": task_url}, kind="check",
             description=f"backend checks that the task app at {redact(task_url, secrets.values())} answers with "
                         "your environment key"),
        Step("POST", ENDPOINTS.create, body, headers={"Idempotency-Key": key},
             description=f"create the RL job ({model})"),
    ]
    return Plan(flow=flow.name, endpoints=flow.endpoints,
                algorithm=config.algorithm, steps=steps, config_path=config.path,
                backend_url=backend_url, idempotency_key=key, warnings=warnings, secrets=secrets.values())
