"""One proposal of a prompt-learning job that is not created, for the pre-flight estimate.

Part of ``POST /dry-rollout`` when the request asks for it (``"proposal": {"seeds": [...], "minibatch":
m}``). The job's baseline prompt is scored on those seeds; a proposal grounds itself on ``m`` of those
rollouts, as a GEPA reflective minibatch or MIPRO's grounding rollouts do: the first ``m`` from the first
one the baseline failed (a search proposes from a batch with a failure: GEPA skips perfect minibatches).
The job's own proposer (offline, or its configured model) writes one new text of the first rewritable
message from them, as each of the job's proposals does, and the new prompt is scored on the same ``m``
seeds, which is how GEPA accepts a proposal. Last, the baseline is scored on all the seeds again: most of a
search's rollouts repeat a prompt and a seed already seen (the offline policy then reuses its embeddings),
and this batch shows their pace; a second proposal from the next batch of rollouts (``again``) shows what a
proposal takes once the policy and the proposer are warm. The answer is what that shows, counted the way the job counts it (its policy route's token usage):
tokens per rollout before and after, the proposer's calls and tokens, the score on the seeds before and
after, and how long each batch (``baseline``, ``proposed``, ``warm``: wall and this process's CPU seconds) and the proposal took. The pre-flight estimate multiplies these figures
by the job's schedule. Nothing is stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from synth_nb.local.executors import prompt_learning_algorithm
from synth_nb.local.executors.prompt_learning.gepa import parse_gepa_settings
from synth_nb.local.executors.prompt_learning.mipro import parse_mipro_settings
from synth_nb.local.executors.prompt_learning.proposers import Proposer
from synth_nb.local.executors.prompt_learning.rollouts import Rollout, TaskAppRunner
from synth_nb.local.executors.prompt_learning.router import CandidateRouter
from synth_nb.local.executors.prompt_learning.runtime import choose_proposer
from synth_nb.local.executors.prompt_learning.search_mipro import render_demos
from synth_nb.local.policies import Policy

__all__ = ["MAX_SEEDS", "propose", "warm_pace"]

#: the most rollouts one batch of the dry proposal runs (a MIPRO grounding pool may be larger)
MAX_SEEDS = 64
#: the warm pace is measured over at least this many seconds, in at most this many batches
WARM_SECONDS = 0.3
WARM_BATCHES = 40


def _batch(router: CandidateRouter, tasks: TaskAppRunner, components: dict[str, str], seeds: list[int],
           split: str, tag: str) -> tuple[list[Rollout], dict[str, Any]]:
    """Score ``components`` on ``seeds``: the rollouts, and tokens per rollout, mean score and seconds."""
    tokens_before = router.prompt_tokens + router.completion_tokens
    started, cpu = time.perf_counter(), time.process_time()
    rollouts = tasks.run(router.url_for(components), seeds, split, tag=tag, budgeted=False)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    tokens = router.prompt_tokens + router.completion_tokens - tokens_before
    scored = [r for r in rollouts if not r.error]
    return rollouts, {"rollouts": len(rollouts), "failed": len(rollouts) - len(scored),
                      "tokens_per_rollout": round(tokens / max(1, len(scored)), 1),
                      "score": round(sum(r.score for r in scored) / len(scored), 4) if scored else None,
                      "seconds": round(seconds, 4), "cpu_seconds": round(cpu, 4)}


def _warm(router: CandidateRouter, tasks: TaskAppRunner, components: dict[str, str], seeds: list[int],
          split: str) -> dict[str, Any]:
    """The baseline again on seeds it has seen, batch after batch for at least ``WARM_SECONDS`` (at most
    ``WARM_BATCHES`` batches): a pace measured over milliseconds is a pace between two of the machine's
    other tasks; over a longer span it is the pace the job gets on this machine now."""
    rollouts, seconds, cpu = 0, 0.0, 0.0
    for _ in range(WARM_BATCHES):
        _, batch = _batch(router, tasks, components, seeds, split, "dry-warm")
        rollouts, seconds, cpu = rollouts + batch["rollouts"], seconds + batch["seconds"], cpu + batch["cpu_seconds"]
        if seconds >= WARM_SECONDS:
            break
    return {"rollouts": rollouts, "seconds": round(seconds, 4), "cpu_seconds": round(cpu, 4)}


def _records(rollouts: list[Rollout]) -> list[dict[str, Any]]:
    """The reflective records both searches hand their proposer (GEPA's adapter, MIPRO's grounding)."""
    return [{"query": r.query, "expected": r.expected, "correct": r.score >= 1.0, "Inputs": r.query,
             "Generated Outputs": r.predicted or "", "Feedback": r.feedback} for r in rollouts if not r.error]


def _demo_chars(text: str, rollouts: list[Rollout]) -> float | None:
    """Characters one demo adds when MIPRO renders it into the prompt (``Example: <query> => <label>``)."""
    demos = [(r.query, str(r.expected)) for r in rollouts if r.expected and not r.error]
    if not demos:
        return None
    return round((len(render_demos(text, demos)) - len(text)) / len(demos), 1)


def _grounding(rollouts: list[Rollout], size: int) -> list[Rollout]:
    """``size`` rollouts in seed order from the first failed one (wrapping round), else the first ``size``."""
    start = next((i for i, r in enumerate(rollouts) if r.score < 1.0 and not r.error), 0)
    return [rollouts[(start + i) % len(rollouts)] for i in range(min(size, len(rollouts)))]


def propose(body: dict[str, Any], serve: Callable[[Any], str], policy: Policy, tasks: TaskAppRunner,
            seeds: list[int], minibatch: int, split: str, *, demos: int = 0) -> dict[str, Any]:
    """Baseline batch, one proposal from ``minibatch`` of its rollouts, the proposal's batch on their seeds."""
    algorithm = prompt_learning_algorithm(body) or "gepa"
    settings = (parse_mipro_settings(body) if algorithm == "mipro" else parse_gepa_settings(body)).common
    spec, why = choose_proposer(settings.proposer)
    warnings: list[str] = []
    proposer = Proposer(spec, warn=warnings.append)
    router = CandidateRouter(serve, policy, settings.messages)
    base = settings.components
    component = next(iter(base))
    try:
        seeds = list(dict.fromkeys(seeds))[:MAX_SEEDS]
        rollouts, pool = _batch(router, tasks, base, seeds, split, "dry-baseline")
        grounding = _grounding(rollouts, minibatch)
        started = time.perf_counter()
        text = proposer.rewrite(base[component], _records(grounding))
        propose_seconds = time.perf_counter() - started
        scored = [r for r in grounding if not r.error]
        before = {"score": round(sum(r.score for r in scored) / len(scored), 4) if scored else None}
        _, after = _batch(router, tasks, {**base, component: text}, [r.seed for r in grounding], split,
                          "dry-proposal")
        warm = _warm(router, tasks, base, seeds, split)
        tokens = proposer.prompt_tokens + proposer.completion_tokens
        calls, fallbacks = proposer.calls, proposer.fallbacks
        again = _again(router, tasks, proposer, base, component, rollouts, grounding, text, split, demos)
    finally:
        proposer.close()
    return {"algorithm": algorithm, "proposer": proposer.kind, "proposer_model": proposer.model,
            "proposer_reason": why, "component": component, "seeds": len(grounding), "split": split,
            "chars_before": len(base[component]), "chars_after": len(text),
            "demo_chars": _demo_chars(text, grounding), "baseline": {**pool, **before, "pool_score": pool["score"]},
            "proposed": after, "warm": warm, "again": again,
            "proposer_calls": calls, "proposer_fallbacks": fallbacks, "proposer_tokens": tokens,
            "propose_seconds": round(propose_seconds, 4), "warnings": warnings[:3]}


def _again(router: CandidateRouter, tasks: TaskAppRunner, proposer: Proposer, base: dict[str, str], component: str,
           rollouts: list[Rollout], grounding: list[Rollout], first: str, split: str,
           demos: int = 0) -> dict[str, Any] | None:
    """A second proposal, from the next batch of rollouts, timed like the first: with the policy and the
    proposer already warm it takes what each of the job's later proposals takes (the first one also pays
    the cold start of a new backend). With ``demos`` (MIPRO) it carries that many demos from those rollouts,
    as a trial's instruction and demo set do: a new prompt the job scores for the first time. None when it
    wrote the same text as the first and carries no demos."""
    size = len(grounding) if len(rollouts) > len(grounding) else max(1, len(grounding) - 1)
    start = rollouts.index(grounding[0]) + len(grounding) if grounding else 0
    window = [rollouts[(start + i) % len(rollouts)] for i in range(min(size, len(rollouts)))]
    started = time.perf_counter()
    text = proposer.rewrite(base[component], _records(window))
    propose_seconds = time.perf_counter() - started
    shown = [(r.query, str(r.expected)) for r in window if r.expected and not r.error][:demos]
    if text == first and not shown:
        return None
    text = render_demos(text, shown)
    _, scored = _batch(router, tasks, {**base, component: text}, [r.seed for r in window], split, "dry-again")
    return {**scored, "propose_seconds": round(propose_seconds, 4)}


def warm_pace(answer: dict[str, Any]) -> float:
    """Seconds per rollout of ``propose``'s warm batches (most of a search's rollouts go at this pace)."""
    warm = answer.get("warm") or {}
    rollouts = int(warm.get("rollouts") or 0)
    return float(warm.get("seconds") or 0.0) / rollouts if rollouts else float("inf")
