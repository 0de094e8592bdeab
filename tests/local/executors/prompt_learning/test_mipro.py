"""MIPRO executor against the bundled task app and the keyword policy, through a fake JobContext."""

from __future__ import annotations

import pytest
from prompt_learning_bodies import small_mipro
from prompt_learning_support import run_cancelled

from synth_nb.local.errors import ExecutorInputError
from synth_nb.local.executors.prompt_learning.mipro import MiproExecutor, parse_mipro_settings


def test_mipro_runs_trials_full_evals_and_topk(task_app, make_ctx) -> None:
    ctx = make_ctx(small_mipro(task_app))
    MiproExecutor().validate("prompt_learning", ctx.body)
    MiproExecutor().run(ctx)

    trials = ctx.of_type("mipro.trial.complete")
    assert len(trials) == 6
    assert {"minibatch_score", "iteration", "trial", "num_seeds"} <= set(trials[0]["data"])
    full = ctx.of_type("mipro.fulleval.complete")
    assert full and full[0]["data"]["num_seeds"] == 16
    incumbent = ctx.of_type("mipro.new_incumbent")[0]["data"]
    assert {"minibatch_score", "best_score", "cumulative_trials"} <= set(incumbent)
    assert len(ctx.of_type("mipro.instruction.proposed")) == 2
    topk = ctx.of_type("mipro.topk.evaluated")
    assert topk and topk[0]["data"]["rank"] == 1 and len(topk[0]["data"]["test_seed_scores"]) == 16
    for expected in ("mipro.job.started", "mipro.iteration.start", "mipro.iteration.complete", "mipro.baseline.test",
                     "mipro.budget.summary", "mipro.job.completed", "prompt.learning.mipro.complete",
                     "prompt.learning.best.prompt", "prompt.learning.final.results", "prompt.learning.completed"):
        assert ctx.of_type(expected), expected
    assert ctx.of_type("prompt.learning.completed")[0]["data"]["finish_reason"] == "completed"
    assert {"mipro.trial.score", "mipro.best_score"} <= {m["name"] for m in ctx.metrics}
    assert ctx.result["best_prompt"]["sections"][0]["role"] == "system"


def test_rollout_cap_is_hard(task_app, make_ctx, policy_server) -> None:
    body = small_mipro(task_app, max_rollouts=61, num_iterations=10)
    ctx = make_ctx(body)
    before = policy_server.requests
    MiproExecutor().run(ctx)
    stats = ctx.result["metadata"]["stats"]
    assert stats["total_rollouts"] <= 61
    assert policy_server.requests - before == stats["total_rollouts"] + stats["heldout_rollouts"]
    assert ctx.of_type("prompt.learning.completed")[0]["data"]["finish_reason"] == "budget_exhausted"


def test_cancellation_keeps_the_incumbent(task_app, make_ctx) -> None:
    ctx = make_ctx(small_mipro(task_app, num_iterations=500))
    run_cancelled(MiproExecutor().run, ctx, lambda event: event["type"] == "mipro.trial.complete")  # first trial
    assert ctx.of_type("prompt.learning.completed")[0]["data"]["finish_reason"] == "cancelled"
    assert ctx.result["best_prompt"]["sections"]


@pytest.mark.parametrize(("change", "message"), [
    ({"online_pool": []}, "online_pool is empty"),
    ({"bootstrap_train_seeds": []}, "bootstrap_train_seeds is empty"),
    ({"num_iterations": 0}, "num_iterations must be > 0"),
    ({"few_shot_score_threshold": 1.5}, "between 0.0 and 1.0"),
    ({"reference_pool": [3, 500]}, "must not overlap"),
    ({"modules": [{"module_id": "m", "stages": [{"stage_id": "planner"}]}]}, "unknown module 'planner'"),
])
def test_bad_configs_are_rejected_at_create_time(task_app, change, message) -> None:
    with pytest.raises(ExecutorInputError, match=message):
        MiproExecutor().validate("prompt_learning", small_mipro(task_app, **change))


def test_seed_pools_may_sit_at_the_top_level(task_app) -> None:
    body = small_mipro(task_app)
    pl = body["config_body"]["prompt_learning"]
    pl["online_pool"] = pl["mipro"].pop("online_pool")
    assert parse_mipro_settings(body).online == list(range(80, 96))


def test_the_smaller_rollout_cap_applies_and_must_cover_the_bootstrap(task_app) -> None:
    body = small_mipro(task_app, max_rollouts=500)
    body["config_body"]["prompt_learning"]["termination_config"] = {"max_rollouts": 60}
    assert parse_mipro_settings(body).max_rollouts == 60
    body["config_body"]["prompt_learning"]["termination_config"] = {"max_rollouts": 2}
    with pytest.raises(ExecutorInputError, match=r"termination_config.max_rollouts \(2\) is smaller than the \d+ "
                                                 "bootstrap_train_seeds"):
        MiproExecutor().validate("prompt_learning", body)
