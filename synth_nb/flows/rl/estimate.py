"""What an RL job will do, from its create body: steps x batch x group x turns rollouts, plus evaluations."""

from __future__ import annotations

from typing import Any

from synth_nb.flows.base import Workload
from synth_nb.plan import Plan

__all__ = ["workload"]


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _steps(training: dict[str, Any]) -> tuple[int | None, str]:
    if _int(training.get("max_steps")):
        return training["max_steps"], f"max_steps {training['max_steps']}"
    epochs, per_epoch = _int(training.get("num_epochs")) or 1, _int(training.get("iterations_per_epoch"))
    if per_epoch is None:
        return None, "iterations_per_epoch"
    return epochs * per_epoch, f"{epochs} epoch(s) x {per_epoch} iterations"


def _evaluations(evaluation: dict[str, Any], steps: int) -> tuple[int, str]:
    seeds = evaluation.get("seeds")
    count = len(seeds) if isinstance(seeds, list) and seeds else (_int(evaluation.get("instances")) or 0)
    every = _int(evaluation.get("every_n_iters"))
    if not count:
        return 0, ""
    rounds = 1 + (steps // every if every else 0)
    return count * rounds, f" + evaluation {count} seeds x {rounds} rounds"


def workload(plan: Plan) -> Workload:
    """Rollouts = steps x batch_size x group_size x max_turns (+ evaluation rollouts); the trained model."""
    data = _table(_table(plan.create_step.body).get("data"))
    config = _table(data.get("config"))
    training, rollout = _table(config.get("training")), _table(config.get("rollout"))
    steps, steps_text = _steps(training)
    group = _int(training.get("group_size"))
    batch = _int(training.get("batch_size")) or (
        (_int(rollout.get("episodes_per_batch")) or 0) // group if group else None) or None
    turns = _int(rollout.get("max_turns")) or _int(training.get("max_turns")) or 1
    missing = [name for name, value in (("training steps", steps), ("batch_size", batch),
                                        ("group_size", group)) if value is None]
    model = data.get("base_model") or data.get("model")
    reply = _int(training.get("max_new_tokens")) or _int(_table(rollout.get("policy_config")).get("max_tokens"))
    common: dict[str, Any] = {"concurrency": _int(rollout.get("max_concurrent_rollouts")), "reply_tokens": reply,
                              "model": model if isinstance(model, str) else None,
                              "task_url": data.get("endpoint_base_url") or None,
                              "seed": int(_table(config.get("data")).get("seed_start") or 0)}
    if missing or steps is None or batch is None or group is None:
        return Workload(formula=f"not bounded: {', '.join(missing)} not set in the config", **common)
    evaluations, eval_text = _evaluations(_table(config.get("evaluation")), steps)
    formula = f"{steps_text} x batch_size {batch} x group_size {group} x max_turns {turns}{eval_text}"
    return Workload(rollouts=steps * batch * group * turns + evaluations, formula=formula, **common)
