"""Local RL: GRPO on a small local model that the task app calls through the backend's policy route.

The executor checks the task app (``/health``, ``/task_info``) before starting anything, then runs the
worker; the model under training is served with ``ctx.serve_policy`` (one URL per concurrent rollout),
so the task app reaches it via ``inference_url`` like any hosted policy. Events: ``rl.train.started``,
``rl.train.step``, ``rl.eval.started``, ``rl.eval.summary``, ``rl.rollout.sampled`` (the sampled rollouts
behind the numbers; its fields are documented in ``synth_nb.local.training.rollout_samples``),
``rl.train.completed``, ``rl.job.completed``;
metrics ``train.reward_mean``, ``train.loss``, ``train.kl``, ``eval.reward_mean``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from synth_nb.local.errors import ExecutorInputError, TaskAppError, TrainingFailed, UnknownLocalModel
from synth_nb.local.executors._training import announce_model, local_settings, number, run_worker, section
from synth_nb.local.executors.base import JobContext
from synth_nb.local.training.model_choice import ModelChoice, choose_model
from synth_nb.local.training.task_app_client import check_task_app

__all__ = ["RlExecutor", "rl_settings"]

#: the research run collapsed at 1e-3; this is the measured-safe default for the tiny model
DEFAULT_LR = 2e-4
DEFAULT_KL_BETA = 0.02
_MAX_SLOTS = 512
_MAX_CONCURRENT = 32


def _config(body: dict[str, Any]) -> dict[str, Any]:
    return section(body, "data", "config")


def _task_url(body: dict[str, Any]) -> str | None:
    data = section(body, "data")
    url = data.get("endpoint_base_url") or section(_config(body), "services").get("task_url")
    return str(url).strip().rstrip("/") if isinstance(url, str) and url.strip() else None


def _model_name(body: dict[str, Any]) -> str | None:
    data, model = section(body, "data"), section(_config(body), "model")
    for value in (data.get("model"), data.get("base_model"), model.get("source"), model.get("base"),
                  section(_config(body), "policy").get("model_name")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def rl_settings(body: dict[str, Any], choice: ModelChoice) -> dict[str, Any]:
    """Training settings from the RL create body (the 0.2.24 payload), with local defaults."""
    config = _config(body)
    training, rollout, evaluation = section(config, "training"), section(config, "rollout"), section(config, "evaluation")
    group = number(training, "group_size", "training", 8)
    if group < 2:
        raise ExecutorInputError("training.group_size must be at least 2 (advantages are relative within a group)")
    episodes = number(rollout, "episodes_per_batch", "rollout", None)
    batch = number(training, "batch_size", "training", None) or (max(1, episodes // group) if episodes else 4)
    steps = number(training, "num_epochs", "training", 1) * number(training, "iterations_per_epoch", "training", 20)
    if training.get("max_steps") is not None:
        steps = number(training, "max_steps", "training", steps)
    seeds = evaluation.get("seeds")
    if seeds is not None and (not isinstance(seeds, list) or not all(isinstance(s, int) for s in seeds)):
        raise ExecutorInputError("evaluation.seeds must be a list of integers")
    eval_seeds = list(seeds) if seeds else list(range(10_000, 10_000 + number(evaluation, "instances", "evaluation", 0,
                                                                               strict=False)))
    policy_config = section(rollout, "policy_config")
    max_turns = number(rollout, "max_turns", "rollout", 1)
    ops = rollout.get("ops") if isinstance(rollout.get("ops"), list) else ["agent", "env"] * max_turns
    if batch * group > _MAX_SLOTS or len(eval_seeds) > _MAX_SLOTS:
        raise ExecutorInputError(f"at most {_MAX_SLOTS} rollouts per step run locally (batch_size x group_size)")
    lora = str(section(config, "model").get("trainer_mode") or "").lower() in ("lora", "qlora")
    lora_table = section(config, "training", "lora") or section(config, "lora")
    return {
        "total_steps": steps, "batch_size": batch, "group_size": group,
        "learning_rate": number(training, "learning_rate", "training", DEFAULT_LR, kind=float),
        "kl_beta": number(training, "kl_beta", "training", None, kind=float, strict=False)
        if training.get("kl_beta") is not None else number(training, "kl_coef", "training", DEFAULT_KL_BETA,
                                                           kind=float, strict=False),
        "temperature": number(policy_config, "temperature", "rollout.policy_config", 1.0, kind=float),
        "max_new_tokens": number(training, "max_new_tokens", "training", None)
        or number(policy_config, "max_tokens", "rollout.policy_config", 32),
        # the backend answers policy calls on a 40-thread pool; stay under it
        "max_concurrent": min(number(rollout, "max_concurrent_rollouts", "rollout", 32), _MAX_CONCURRENT),
        "eval_seeds": eval_seeds, "eval_every": number(evaluation, "every_n_iters", "evaluation", 0, strict=False),
        # evaluation.temperature = 0 means greedy; by default the policy is evaluated as it is trained (sampled)
        "eval_temperature": number(evaluation, "temperature", "evaluation", None, kind=float, strict=False)
        if evaluation.get("temperature") is not None
        else number(policy_config, "temperature", "rollout.policy_config", 1.0, kind=float),
        "env_name": rollout.get("env_name"), "policy_name": rollout.get("policy_name"),
        "env_config": section(rollout, "env_config"), "policy_config": policy_config, "ops": ops,
        "seed_start": number(section(config, "data"), "seed_start", "data", 0, strict=False),
        "lora": {"r": number(lora_table, "r", "training.lora", 8), "alpha": number(lora_table, "alpha", "training.lora", 16),
                 "dropout": float(lora_table.get("dropout") or 0.0),
                 "target_modules": lora_table.get("target_modules")} if lora else None,
    }


def _task_key(ctx: JobContext) -> str | None:
    """Task-app key: metadata.task_app_api_key › the backend's ENVIRONMENT_API_KEY › this process's env."""
    given = section(ctx.body, "metadata").get("task_app_api_key")
    if isinstance(given, str) and given:
        return given
    return getattr(ctx, "environment_api_key", None) or os.environ.get("ENVIRONMENT_API_KEY")


class RlExecutor:
    name = "rl"

    def validate(self, kind: str, body: dict[str, Any], options: dict[str, Any] | None = None) -> None:
        if kind != "rl":
            raise ExecutorInputError(f"the rl executor runs RL jobs, not {kind!r}")
        url = _task_url(body)
        if not url or not url.startswith(("http://", "https://")):
            raise ExecutorInputError("data.endpoint_base_url (services.task_url) must be the task app's http(s) "
                                     f"URL, got {url!r}")
        try:
            choice = choose_model(_model_name(body))
        except UnknownLocalModel as exc:
            raise ExecutorInputError(str(exc)) from None
        rl_settings(body, choice)
        local_settings(body)

    def run(self, ctx: JobContext) -> None:
        body = ctx.body
        self.validate(ctx.kind, body)
        try:
            choice = choose_model(_model_name(body), artifact_roots=[Path(ctx.work_dir).parent])
        except UnknownLocalModel as exc:
            ctx.emit("rl.train.failed", str(exc), {"error": str(exc)}, level="error")
            raise TrainingFailed(str(exc)) from None
        model_choice = announce_model(ctx, "rl", choice)
        settings = rl_settings(body, choice)
        url, key = _task_url(body), _task_key(ctx)
        assert url is not None
        try:
            check_task_app(url, key)
        except TaskAppError as exc:
            ctx.emit("rl.train.failed", str(exc), {"error": str(exc), "task_url": url}, level="error")
            raise TrainingFailed(str(exc)) from None
        base = "synth-nb-tiny-gpt2" if choice.kind == "tiny" else (choice.requested or "local")
        fine_tuned = f"rl:{base}:{ctx.job_id}"
        label = section(_config(body), "model").get("label") or base
        config = {**settings, **local_settings(body), "job_id": ctx.job_id, "work_dir": str(ctx.work_dir),
                  "task_url": url, "task_key": key, "model_label": str(label), "fine_tuned_model": fine_tuned,
                  "model_choice": model_choice}
        slots = max(settings["batch_size"] * settings["group_size"], len(settings["eval_seeds"]))
        status, peak = run_worker(ctx, "rl", config, prefix="rl", policy_slots=slots)
        if status == "succeeded":
            ctx.emit("rl.job.completed", f"RL model {fine_tuned} is ready",
                     {"fine_tuned_model": fine_tuned, "peak_rss_mb": round(peak, 1)})
