"""A dry rollout is the job's own rollout: same policy, same prompt, same task app, same reward.

A real GEPA job runs on the embedded backend against the banking task app; the rewards it reports for the
baseline prompt on its held-out seeds are what dry rollouts of the same seeds and prompt answer, and the
dry rollouts leave no job behind.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
from minimal_configs import LOCAL_GEPA
from shared_fixtures import ENV_KEY, prompt_learning_jobs

from synth_nb import pipeline
from synth_nb.flows import get_flow
from synth_nb.job import Job
from synth_nb.pipeline import SecretSources, Target
from synth_nb.pipeline.dry_rollout import dry_rollout


def _prepared(folder: Path, backend: Any, task_app: Any, budget: int = 24) -> pipeline.Prepared:
    path = folder / "gepa.toml"
    path.write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=budget))
    target = Target(f"{backend.url}/api", backend.api_key)
    prepared = pipeline.prepare_config(path, overrides=pipeline.build_overrides({}, target), target=target,
                                sources=SecretSources())
    assert prepared.ok, prepared.error
    return prepared


async def _run_to_the_end(prepared: pipeline.Prepared, target: Target) -> Job:
    assert prepared.plan is not None
    job = await pipeline.submit_plan(prepared.plan, target, target.own_key or "")
    try:
        await job.wait(timeout=900)
    finally:
        await job.client.aclose()
    return job



def test_dry_rollout_rewards_equal_the_real_jobs_for_the_same_seeds_and_prompt(
        folder: Path, backend: Any, task_app: Any) -> None:
    prepared = _prepared(folder, backend, task_app)
    target = Target(f"{backend.url}/api", backend.api_key)
    assert prepared.plan is not None
    dry = {seed: dry_rollout(prepared.plan, target, backend.api_key, seed=seed, split="test") for seed in range(16)}
    assert prompt_learning_jobs(backend) == []  # dry rollouts create nothing

    job = asyncio.run(_run_to_the_end(prepared, target))
    assert job.status == "succeeded"
    (baseline,) = [e for e in job.events if e.type == "prompt.learning.validation.scored"
                   and e.data.get("is_baseline")]
    real = dict(zip(baseline.data["seeds"], baseline.data["instance_scores"], strict=True))
    assert baseline.data["split"] == "test" and sorted(real) == list(range(16))
    assert {seed: result.reward for seed, result in dry.items()} == real
    assert 0.0 in real.values() and 1.0 in real.values()  # both outcomes occur, so equality says something


def test_the_trace_shows_the_prompt_the_policy_received_and_its_reply(folder: Path, backend: Any,
                                                                       task_app: Any) -> None:
    prepared = _prepared(folder, backend, task_app)
    assert prepared.plan is not None
    result = dry_rollout(prepared.plan, Target(f"{backend.url}/api", backend.api_key), backend.api_key,
                         seed=3, split="train")
    assert result.ok and result.reward in (0.0, 1.0) and result.latency_ms is not None and result.latency_ms > 0
    (call,) = result.trace
    roles = [m["role"] for m in call["messages"]]
    assert roles == ["system", "user"] and "The ATM ate my card" in call["messages"][1]["content"]
    assert call["response"]["tool_calls"][0]["function"]["name"] == "banking_classify"
    assert result.tokens is not None and result.tokens > 0
    text = "\n".join(result.lines())
    assert "seed 3 (train split)" in text and "call 1 sent [user]: Customer Query: The ATM ate my card" in text
    assert "call 1 reply: banking_classify(" in text
    assert ENV_KEY not in repr(result) + text


def test_a_dry_proposal_is_one_proposal_of_the_jobs_own_proposer_scored_on_its_minibatch(
        folder: Path, backend: Any, task_app: Any) -> None:
    prepared = _prepared(folder, backend, task_app)
    assert prepared.plan is not None
    search = get_flow("prompt_learning").workload(prepared.plan).search
    assert search is not None and search.seeds == tuple(range(8)) and search.minibatch == 4
    target = Target(f"{backend.url}/api", backend.api_key)
    result = dry_rollout(prepared.plan, target, backend.api_key, seed=0, split="train", proposal=search)
    proposal = result.proposal
    assert result.ok and proposal is not None and len(result.trace) == 1  # the trace is the one dry rollout's
    # the warm pace: the 8 seeds again, batch after batch, over a third of a second or more (or 40 batches)
    assert proposal.proposer == "offline" and proposal.seeds == 4 and proposal.warm_rollouts % 8 == 0
    assert 8 <= proposal.warm_rollouts <= 40 * 8
    # a second proposal, written from the next 4 rollouts once the policy and proposer were warm, and scored
    assert proposal.again_rollouts == 4 and proposal.again_seconds > 0
    # the keyword policy misses some of the first seeds, so the offline proposer adds their queries to the
    # system message: longer text, more tokens per rollout, a better score on the same seeds
    assert proposal.chars_after > proposal.chars_before and proposal.added_tokens > 0
    assert proposal.proposed_score is not None and proposal.baseline_score is not None and proposal.improved
    assert proposal.proposer_tokens == 0 and proposal.pace > 0
    assert result.lines()[-1].startswith("dry proposal: the offline proposer rewrote the prompt from 4 rollouts: ")
    assert prompt_learning_jobs(backend) == []
    refused = httpx.post(f"{backend.url}/api/dry-rollout", timeout=60,
                         headers={"Authorization": f"Bearer {backend.api_key}"},
                         json={"kind": "prompt_learning", "body": prepared.plan.create_step.body,
                               "proposal": {"seeds": ["x"]}})
    assert refused.status_code == 422 and "proposal.seeds" in refused.text


def test_a_backend_without_the_route_is_said_to_offer_none() -> None:
    from synth_nb.plan import Plan, Step

    plan = Plan("prompt_learning", "gepa", [Step("POST", "/prompt-learning/online/jobs", {"a": 1})],
                endpoints=get_flow("prompt_learning").endpoints)
    transport = httpx.MockTransport(lambda request: httpx.Response(404, json={"detail": "Not Found"}))
    result = dry_rollout(plan, Target("https://backend.example/api"), "sk-key", seed=0, transport=transport)
    assert not result.offered and not result.ok
    assert result.lines() == ["dry rollout: not offered by the backend at https://backend.example/api (the "
                              "embedded backend, --backend local, runs one); skipped"]
