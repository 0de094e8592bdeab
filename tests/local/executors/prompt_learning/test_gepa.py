"""GEPA executor against the bundled task app and the keyword policy, through a fake JobContext."""

from __future__ import annotations

import pytest
from prompt_learning_bodies import small_gepa
from prompt_learning_support import run_cancelled

from synth_nb.local.errors import ExecutorInputError
from synth_nb.local.executors.prompt_learning.gepa import GepaExecutor, parse_gepa_settings


def test_gepa_runs_and_reports_the_synth_events(task_app, make_ctx) -> None:
    ctx = make_ctx(small_gepa(task_app, budget=160))
    GepaExecutor().validate("prompt_learning", ctx.body)
    GepaExecutor().run(ctx)

    types = [e["type"] for e in ctx.events]
    for expected in ("prompt.learning.gepa.start", "prompt.learning.proposer.selected", "prompt.learning.progress",
                     "prompt.learning.trial.results", "gepa.transformation.proposed",
                     "prompt.learning.validation.scored", "prompt.learning.validation.summary",
                     "prompt.learning.best.prompt", "prompt.learning.final.results", "prompt.learning.gepa.complete",
                     "prompt.learning.completed", "prompt.learning.billing.end"):
        assert expected in types, expected
    assert ctx.of_type("prompt.learning.proposer.selected")[0]["data"]["proposer"] == "offline"
    baseline = [e for e in ctx.of_type("prompt.learning.validation.scored") if e["data"].get("is_baseline")]
    assert len(baseline) == 1 and len(baseline[0]["data"]["instance_scores"]) == 16
    trial = ctx.of_type("prompt.learning.trial.results")[0]["data"]
    assert {"mean", "completed", "total"} <= set(trial)
    summary = ctx.of_type("prompt.learning.validation.summary")[0]["data"]
    assert summary["baseline"]["seeds"] == list(range(16)) and summary["results"][0]["rank"] == 0
    best = ctx.of_type("prompt.learning.best.prompt")[0]["data"]
    assert [s["role"] for s in best["best_prompt"]["sections"]] == ["system", "user"]
    done = ctx.of_type("prompt.learning.completed")[0]["data"]
    assert done["finish_reason"] == "budget_exhausted" and done["total_usd"] == 0.0
    names = {m["name"] for m in ctx.metrics}
    assert {"gepa.trial.score", "gepa.best_score", "gepa.transformation.mean_score"} <= names
    assert ctx.result["best_prompt"] == best["best_prompt"]
    assert ctx.result["best_train_score"] >= ctx.result["baseline_train_score"]
    assert isinstance(ctx.result["best_score"], float) and isinstance(ctx.result["baseline_score"], float)


@pytest.mark.parametrize("budget", [37, 90, 161])
def test_rollout_budget_is_a_hard_cap(task_app, make_ctx, policy_server, budget) -> None:
    ctx = make_ctx(small_gepa(task_app, budget=budget, evaluation__test_pool=[]))
    before = policy_server.requests
    GepaExecutor().run(ctx)
    stats = ctx.result["metadata"]["stats"]
    assert stats["total_rollouts"] <= budget
    held_out = stats["heldout_rollouts"]
    assert policy_server.requests - before == stats["total_rollouts"] + held_out
    progress = [e["data"]["rollouts_completed"] for e in ctx.of_type("prompt.learning.progress")]
    assert max(progress) <= budget and max(progress) == stats["total_rollouts"]
    # no ETA from the first rollouts (they carry the start-up), one from 5% of the budget on
    shares = [(e["data"]["percent_rollouts"], e["data"]["eta_seconds"]) for e in ctx.of_type("prompt.learning.progress")
              if e["data"]["percent_rollouts"]]
    assert any(share < 0.05 for share, _eta in shares)
    assert all((eta is None) == (share < 0.05) for share, eta in shares), shares


def test_better_prompt_is_found_on_the_validation_set(task_app, make_ctx) -> None:
    ctx = make_ctx(small_gepa(task_app, budget=300))
    GepaExecutor().run(ctx)
    assert ctx.result["best_train_score"] > ctx.result["baseline_train_score"]
    system = ctx.result["best_prompt"]["sections"][0]["content"]
    assert "Intents:" in system
    accepted = [e for e in ctx.of_type("prompt.learning.proposal.scored") if e["data"]["accepted"]]
    assert accepted


def test_cancellation_stops_the_search_and_keeps_the_best_candidate(task_app, make_ctx) -> None:
    ctx = make_ctx(small_gepa(task_app, budget=100_000))
    run_cancelled(GepaExecutor().run, ctx, lambda event: event["type"] == "prompt.learning.candidate.evaluated"
                  and event["data"]["candidate_index"] >= 1)  # after the first new candidate
    done = ctx.of_type("prompt.learning.completed")[0]["data"]
    assert done["finish_reason"] == "cancelled" and done["heldout_rollouts"] == 0
    assert done["rollouts_completed"] < 1000
    assert ctx.result["best_prompt"]["sections"][0]["role"] == "system"


@pytest.mark.parametrize(("change", "message"), [
    ({"modules": [{"module_id": "retriever"}]}, "unknown module 'retriever'"),
    ({"evaluation__train_seeds": []}, "train_seeds is empty"),
    ({"evaluation__val_seeds": []}, "val_seeds is empty"),
    ({"rollout__budget": 0}, "rollout.budget must be > 0"),
    ({"rollout__budget": 8}, "smaller than the 16 validation seeds"),
    ({"rollout__minibatch_size": -1}, "minibatch_size must be > 0"),
    ({"evaluation__train_seeds": [1, "two"]}, "list of non-negative integer seeds"),
])
def test_bad_configs_are_rejected_at_create_time(task_app, change, message) -> None:
    body = small_gepa(task_app, **change)
    with pytest.raises(ExecutorInputError, match=message):
        GepaExecutor().validate("prompt_learning", body)


def test_offline_policy_refuses_a_task_it_cannot_serve(task_app) -> None:
    body = small_gepa(task_app)
    pl = body["config_body"]["prompt_learning"]
    pl["policy"]["local_policy"] = "offline"
    pl["gepa"]["env_name"] = "crafter"
    pl["task_app_id"] = "crafter"
    with pytest.raises(ExecutorInputError, match="inference_url"):
        GepaExecutor().validate("prompt_learning", body)


def test_missing_prompt_and_unknown_policy_are_rejected(task_app) -> None:
    body = small_gepa(task_app)
    body["config_body"]["prompt_learning"].pop("initial_prompt")
    with pytest.raises(ExecutorInputError, match="initial_prompt.messages"):
        GepaExecutor().validate("prompt_learning", body)
    body = small_gepa(task_app)
    body["config_body"]["prompt_learning"]["policy"]["local_policy"] = "magic"
    with pytest.raises(ExecutorInputError, match="local_policy"):
        GepaExecutor().validate("prompt_learning", body)


def test_flat_legacy_keys_are_read(task_app) -> None:
    body = small_gepa(task_app)
    gepa = body["config_body"]["prompt_learning"]["gepa"]
    gepa.pop("rollout")
    gepa.update({"rollout_budget": 77, "minibatch_size": 3, "max_concurrent_rollouts": 2})
    settings = parse_gepa_settings(body)
    assert (settings.budget, settings.minibatch_size, settings.max_concurrent) == (77, 3, 2)


def test_llm_proposer_is_used_when_reachable(task_app, make_ctx, policy_server) -> None:
    calls = []

    def proposer_model(request: dict) -> dict:
        calls.append(request)
        current = request["messages"][1]["content"].split("```")[1].strip()
        text = current + "\n\nIntents:\n- card_swallowed: the atm kept my card; cash machine took my card"
        return {"choices": [{"message": {"role": "assistant", "content": f"```\n{text}\n```"}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20}}

    url = policy_server.add(proposer_model)
    ctx = make_ctx(small_gepa(task_app, budget=100, mutation={"llm_model": "tiny-proposer", "llm_provider": "openai",
                                                               "llm_inference_url": url}))
    GepaExecutor().run(ctx)
    selected = ctx.of_type("prompt.learning.proposer.selected")[0]["data"]
    assert selected["proposer"] == "llm" and selected["model"] == "tiny-proposer"
    assert calls and ctx.of_type("prompt.learning.completed")[0]["data"]["token_count_mutation"] >= 120


def test_upstream_policy_receives_the_candidate_prompts(task_app, make_ctx, policy_server, monkeypatch) -> None:
    from synth_nb.local.policies.keyword import KeywordPolicy

    systems: list[str] = []
    keyword = KeywordPolicy()

    def upstream(request: dict) -> dict:
        systems.append(request["messages"][0]["content"])
        assert request["model"] == "my-model"
        return keyword.complete(request)

    url = policy_server.add(upstream)
    monkeypatch.setenv("MY_UPSTREAM_KEY", "sk-upstream-canary-0123456789")
    body = small_gepa(task_app, budget=80)
    policy = body["config_body"]["prompt_learning"]["policy"]
    policy.update({"local_policy": "upstream", "inference_url": url,
                   "model": "my-model", "api_key_env": "MY_UPSTREAM_KEY"})
    ctx = make_ctx(body)
    GepaExecutor().run(ctx)
    assert any("Intents:" in s for s in systems) and any("Intents:" not in s for s in systems)
    ready = ctx.of_type("prompt.learning.policy.ready")[0]["data"]
    assert ready["policy"] == "upstream" and ready["api_key_source"] == "MY_UPSTREAM_KEY"
    assert "sk-upstream-canary" not in repr(ctx.events) + repr(ctx.result)
    assert "total_usd" not in ctx.of_type("prompt.learning.completed")[0]["data"]


def test_executors_are_registered_for_the_backend() -> None:
    from synth_nb.local.executors import load_executor

    assert load_executor("gepa").name == "gepa" and load_executor("mipro").name == "mipro"


def test_the_smaller_of_the_budget_and_termination_max_rollouts_applies(task_app) -> None:
    """``--max-rollouts`` arrives as ``termination_config.max_rollouts``; the search stops at whichever cap is
    lower, and a cap too small for the baseline is named by the key that set it."""
    body = small_gepa(task_app)
    pl = body["config_body"]["prompt_learning"]
    pl["termination_config"] = {"max_rollouts": 40}
    assert parse_gepa_settings(body).budget == 40
    pl["termination_config"] = {"max_rollouts": 4000}
    assert parse_gepa_settings(body).budget == pl["gepa"]["rollout"]["budget"]
    pl["termination_config"] = {"max_rollouts": 8}
    with pytest.raises(ExecutorInputError, match=r"termination_config.max_rollouts \(8\) is smaller than the 16"):
        GepaExecutor().validate("prompt_learning", body)
