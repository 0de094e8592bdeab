"""What a prompt-learning job will do, from its create body: the rollouts GEPA or MIPRO will spend."""

from __future__ import annotations

from typing import Any

from synth_nb.flows.base import Workload
from synth_nb.plan import Plan

__all__ = ["workload"]


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _seeds(*values: Any) -> list[int]:
    for value in values:
        if isinstance(value, list) and value:
            return [v for v in value if isinstance(v, int)]
    return []


def _gepa(table: dict[str, Any]) -> tuple[int | None, str, int | None, list[int]]:
    gepa = _table(table.get("gepa"))
    rollout, evaluation = _table(gepa.get("rollout")), _table(gepa.get("evaluation"))
    budget = _int(rollout.get("budget")) or _int(gepa.get("rollout_budget")) or _int(
        _table(table.get("termination_config")).get("max_rollouts"))
    minibatch = _int(rollout.get("minibatch_size"))
    test = _seeds(evaluation.get("test_pool"), gepa.get("test_pool"))
    top_k = _int(evaluation.get("validation_top_k")) or 3
    train = _seeds(evaluation.get("train_seeds"), evaluation.get("seeds"), table.get("train_seeds"))
    if budget is None:
        return None, "no rollout.budget in [prompt_learning.gepa]: the backend decides", None, train
    held_out = len(test) * (top_k + 1)
    formula = f"rollout.budget {budget}" + (f" (reflective minibatches of {minibatch})" if minibatch else "")
    if held_out:
        formula += f" + held-out test_pool {len(test)} x {top_k + 1} prompts after the search"
    return budget + held_out, formula, _int(rollout.get("max_concurrent")), train


def _mipro(table: dict[str, Any]) -> tuple[int | None, str, int | None, list[int]]:
    mipro = _table(table.get("mipro"))
    iterations, per_iteration = _int(mipro.get("num_iterations")), _int(mipro.get("num_evaluations_per_iteration"))
    batch = _int(mipro.get("batch_size"))
    bootstrap = _seeds(mipro.get("bootstrap_train_seeds"), table.get("bootstrap_train_seeds"))
    if not (iterations and per_iteration and batch):
        return None, "num_iterations, num_evaluations_per_iteration or batch_size missing", None, bootstrap
    trials = iterations * per_iteration * batch
    formula = (f"num_iterations {iterations} x num_evaluations_per_iteration {per_iteration} x batch_size {batch}"
               f" + {len(bootstrap)} bootstrap rollouts")
    return trials + len(bootstrap), formula, _int(mipro.get("max_concurrent")), bootstrap


def workload(plan: Plan) -> Workload:
    """Rollouts (budget x minibatch), concurrency, the policy model and the first training seed."""
    body = _table(plan.create_step.body)
    table = _table(_table(body.get("config_body")).get("prompt_learning"))
    algorithm = str(table.get("algorithm") or plan.algorithm or "").lower()
    rollouts, formula, concurrency, seeds = _mipro(table) if algorithm == "mipro" else _gepa(table)
    env_config = _table(table.get("env_config")) or _table(_table(table.get(algorithm)).get("env_config"))
    policy = _table(table.get("policy"))
    url = table.get("task_app_url")
    return Workload(rollouts=rollouts, formula=formula, concurrency=concurrency,
                    model=policy.get("model") if isinstance(policy.get("model"), str) else None,
                    task_url=url if isinstance(url, str) else None, seed=seeds[0] if seeds else 0,
                    split=str(env_config.get("split") or env_config.get("pool") or "train"))
