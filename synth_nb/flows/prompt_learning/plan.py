"""Prompt-learning plan (GEPA / MIPRO): ``POST /prompt-learning/online/jobs`` (auto-starts).

The job body matches synth-ai 0.2.24's builder for every config it accepts. Deliberate difference: MIPRO
seed pools written at the ``[prompt_learning]`` level (which 0.2.24's validator accepts but its builder
crashes on) are used for ``[prompt_learning.mipro]`` when that table does not set them.

``--max-rollouts N`` travels in the body (``with_rollout_limit``), so the backend stops scheduling rollouts
at the limit instead of a client cancelling after the fact: ``termination_config.max_rollouts`` (the
backend's rollout cap for both algorithms) and, for GEPA, ``gepa.rollout.budget`` (GEPA's own budget
field), each lowered to N and never raised.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from pydantic import SecretStr

from synth_nb.errors import ConfigError, SecretsError
from synth_nb.flows._common import (
    backend_for,
    config_error,
    idempotency_for,
    start_warnings,
)
from synth_nb.flows.base import ConfigLike, Flow
from synth_nb.flows.overrides import Overrides
from synth_nb.flows.prompt_learning.checks import MIPRO_POOLS
from synth_nb.flows.prompt_learning.defaults import fill_prompt_learning_defaults
from synth_nb.flows.prompt_learning.jobs import JOBS
from synth_nb.plan import Plan, Step, TaskApp
from synth_nb.secrets import SecretBundle
from synth_nb.secrets.redact import redact

ENDPOINTS = JOBS.endpoints

__all__ = ["ENDPOINTS", "build_body", "build_plan", "resolve_task_url", "with_rollout_limit"]


def _table(config: ConfigLike) -> dict[str, Any]:
    table = config.raw.get("prompt_learning")
    return copy.deepcopy(table if isinstance(table, dict) and table else config.raw)


def resolve_task_url(config: ConfigLike, overrides: Overrides, secrets: SecretBundle,
                     warnings: list[str]) -> str:
    """``--task-url`` > ``[prompt_learning].task_app_url`` > ``TASK_APP_URL`` (0.2.24's order here)."""
    table = _table(config)
    raw = table.get("task_app_url")
    from_config = raw.strip() or None if isinstance(raw, str) else None
    env = secrets.settings.get("TASK_APP_URL")
    if overrides.task_url:
        if from_config and overrides.task_url != from_config:
            warnings.append(redact(f"--task-url {overrides.task_url} replaces [prompt_learning].task_app_url "
                                   f"{from_config}", secrets.values()))
        return overrides.task_url
    if from_config:
        if env is not None and env.value.strip() and env.value.strip() != from_config:
            warnings.append(f"TASK_APP_URL from {env.source} is ignored: [prompt_learning].task_app_url "
                            f"({from_config}) takes precedence for prompt learning")
        return from_config
    if env is not None and env.value.strip():
        return env.value.strip()
    raise config_error(config, "prompt_learning.task_app_url", "no task app URL",
                       hint="set [prompt_learning].task_app_url, export TASK_APP_URL or pass --task-url")


def _task_app_key(config: ConfigLike, table: dict[str, Any], secrets: SecretBundle) -> str:
    """``ENVIRONMENT_API_KEY`` (wherever it was found) beats a key written in the TOML, as in 0.2.24."""
    value = secrets.secret_value("ENVIRONMENT_API_KEY")
    if value:
        return value
    in_toml = table.get("task_app_api_key")
    if isinstance(in_toml, str) and in_toml.strip() and not in_toml.strip().startswith("${"):
        return in_toml.strip()
    raise SecretsError("missing required key ENVIRONMENT_API_KEY (the task app key prompt learning sends): "
                       "export it, put it in a .env file next to the config, or pass --env-file PATH")


def _gepa_seeds(table: dict[str, Any]) -> None:
    gepa: dict[str, Any] = table["gepa"] if isinstance(table.get("gepa"), dict) else {}
    evaluation: dict[str, Any] = gepa["evaluation"] if isinstance(gepa.get("evaluation"), dict) else {}
    seeds = evaluation.get("train_seeds") or evaluation.get("seeds")
    if seeds and not table.get("train_seeds"):
        table["train_seeds"] = seeds
    if seeds and not table.get("evaluation_seeds"):
        table["evaluation_seeds"] = seeds


def _mipro_seeds(config: ConfigLike, table: dict[str, Any], warnings: list[str]) -> None:
    mipro = table.get("mipro")
    if not isinstance(mipro, dict):
        raise config_error(config, "prompt_learning.mipro", "MIPRO needs a [prompt_learning.mipro] table")
    for pool in MIPRO_POOLS:
        if not mipro.get(pool) and table.get(pool):
            mipro[pool] = table[pool]
            if pool in ("bootstrap_train_seeds", "online_pool"):
                warnings.append(f"[prompt_learning].{pool} used as [prompt_learning.mipro].{pool}")
    for pool in ("bootstrap_train_seeds", "online_pool"):
        if not mipro.get(pool):
            raise config_error(config, f"prompt_learning.mipro.{pool}", f"MIPRO needs a non-empty {pool}",
                               hint=f"add {pool} = [0, 1, 2, ...] to [prompt_learning.mipro]")
    env_name = mipro.get("env_name")
    if env_name and not table.get("env_name") and not table.get("task_app_id"):
        table["env_name"] = env_name


def build_body(config: ConfigLike, task_url: str, task_app_key: str, backend_url: str,
               warnings: list[str] | None = None) -> dict[str, Any]:
    """The ``POST /prompt-learning/online/jobs`` body (``config_body.prompt_learning`` = the table)."""
    table = fill_prompt_learning_defaults(_table(config))
    table["task_app_url"] = task_url
    table["task_app_api_key"] = task_app_key
    algorithm = table.get("algorithm")
    if algorithm == "gepa":
        _gepa_seeds(table)
    elif algorithm == "mipro":
        _mipro_seeds(config, table, warnings if warnings is not None else [])
    return {
        "algorithm": algorithm,
        "config_body": {"prompt_learning": table},
        "overrides": {},
        "metadata": {"backend_base_url": backend_url},
        "auto_start": True,
    }


def build_plan(flow: Flow, config: ConfigLike, overrides: Overrides, secrets: SecretBundle) -> Plan:
    """One step: create the job (the backend starts it)."""
    warnings = start_warnings(flow, config, overrides)
    task_url = resolve_task_url(config, overrides, secrets, warnings)
    key = _task_app_key(config, _table(config), secrets)
    backend_url = backend_for(overrides)
    idem = idempotency_for(overrides)
    body = build_body(config, task_url, key, backend_url, warnings)
    label = str(body["algorithm"]).upper()
    steps = [Step("POST", ENDPOINTS.create, body, headers={"Idempotency-Key": idem},
                  description=f"create the {label} prompt-learning job "
                              f"(task app {redact(task_url, secrets.values())})")]
    return Plan(flow=flow.name, endpoints=flow.endpoints,
                algorithm=config.algorithm or body["algorithm"], steps=steps,
                config_path=config.path, backend_url=backend_url, idempotency_key=idem, warnings=warnings,
                secrets=secrets.values(), results_folder=flow.results_folder(config),
                task_app=TaskApp(task_url, SecretStr(key) if key else None))


def _lowered(table: dict[str, Any], key: str, limit: int) -> None:
    current = table.get(key)
    if isinstance(current, int) and not isinstance(current, bool) and current > 0:
        limit = min(current, limit)
    table[key] = limit


def _first_scored(table: dict[str, Any]) -> tuple[int, str]:
    """How many rollouts a search spends before anything can be compared (the baseline), and on what."""
    algorithm = table.get("algorithm")
    found = table.get(algorithm) if isinstance(algorithm, str) else None
    section: dict[str, Any] = found if isinstance(found, dict) else {}
    if algorithm == "gepa":
        nested = section.get("evaluation")
        evaluation: dict[str, Any] = nested if isinstance(nested, dict) else {}
        seeds = evaluation.get("val_seeds") or evaluation.get("validation_seeds") or section.get("validation_seeds")
        return (len(seeds) if isinstance(seeds, list) else 0), "[prompt_learning.gepa.evaluation].val_seeds"
    seeds = section.get("bootstrap_train_seeds")
    return (len(seeds) if isinstance(seeds, list) else 0), "[prompt_learning.mipro].bootstrap_train_seeds"


def with_rollout_limit(plan: Plan, limit: int) -> Plan:
    """``plan`` with ``--max-rollouts limit`` written into its job body (a copy; the plan is not changed).

    A search scores the baseline prompt first (GEPA on every validation seed, MIPRO on its bootstrap seeds),
    so a limit below that could never compare anything: a ``ConfigError`` before anything is sent.
    """
    steps = []
    for step in plan.steps:
        body = step.body
        table = body.get("config_body", {}).get("prompt_learning") if isinstance(body, dict) else None
        if step.path != ENDPOINTS.create or not isinstance(table, dict):
            steps.append(step)
            continue
        body = copy.deepcopy(body)
        table = body["config_body"]["prompt_learning"]
        termination = table.setdefault("termination_config", {})
        if not isinstance(termination, dict):
            termination = table["termination_config"] = {}
        _lowered(termination, "max_rollouts", limit)
        first, seeds = _first_scored(table)
        if limit < first:
            raise ConfigError(f"--max-rollouts {limit} is smaller than the {first} rollouts that score the baseline "
                              f"prompt first ({seeds}); raise it or use fewer seeds there",
                              path=plan.config_path, key="max_rollouts")
        if table.get("algorithm") == "gepa" and isinstance(table.get("gepa"), dict):
            rollout = table["gepa"].setdefault("rollout", {})
            if isinstance(rollout, dict):
                _lowered(rollout, "budget", limit)
            if "rollout_budget" in table["gepa"]:
                _lowered(table["gepa"], "rollout_budget", limit)
        steps.append(replace(step, body=body))
    return replace(plan, steps=steps)
