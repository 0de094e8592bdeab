"""Local GEPA executor: reflective prompt evolution with Pareto selection on the ``gepa`` package.

Reads ``[prompt_learning.gepa]``: ``rollout.budget`` (hard cap on search rollouts; default 300; the smaller of
it and ``termination_config.max_rollouts``, where ``--max-rollouts`` is sent, applies),
``rollout.max_concurrent`` (parallel task-app calls), ``rollout.minibatch_size`` (reflective minibatch),
``evaluation.train_seeds|seeds`` (feedback set), ``evaluation.val_seeds|validation_seeds`` (Pareto set),
``evaluation.test_pool`` (held-out, scored after the search, outside the budget),
``evaluation.validation_top_k`` (candidates scored on the held-out pool), ``rng_seed``,
``population.crossover_rate`` (> 0 with several rewritable messages enables merge),
``population.num_generations × children_per_generation`` (proposal cap, when the table is given),
``population.patience_generations`` (stop after that many iterations without a better candidate),
``mutation.llm_*`` (proposer model; ``mutation.local_model`` for one the backend serves),
``termination_config.max_time_seconds``.

Events: ``prompt.learning.gepa.start``, ``prompt.learning.proposer.selected``, ``prompt.learning.policy.ready``,
``prompt.learning.rollouts.start``, ``prompt.learning.progress``, ``prompt.learning.trial.results``,
``prompt.learning.trial.complete``, ``gepa.transformation.proposed``, ``prompt.learning.proposal.scored``,
``prompt.learning.candidate.evaluated``, ``prompt.learning.gepa.new_best``, ``prompt.learning.gepa.merge``,
``prompt.learning.heldout.start``, then the result events of ``report`` and, last (later synth-ai releases
stop streaming there), ``prompt.learning.gepa.complete``. Metric points (what our chart reads): ``gepa.trial.score`` and
``gepa.best_score`` (step = search rollouts used), ``gepa.candidate.val_score`` (step = candidate index),
``gepa.transformation.mean_score`` (step = proposal number; the one 0.2.24's CLI shows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from synth_nb.local.errors import ExecutorInputError
from synth_nb.local.executors.base import JobContext
from synth_nb.local.executors.prompt_learning.rollouts import SearchHalted
from synth_nb.local.executors.prompt_learning.runtime import PromptRuntime, SearchExecutor, seed_split
from synth_nb.local.executors.prompt_learning.settings import (
    PromptSettings,
    as_table,
    check_modules,
    get_path,
    parse_prompt_settings,
    positive_int,
    proposer_spec,
    rollout_cap,
    section,
    seed_list,
)

if TYPE_CHECKING:
    from synth_nb.local.executors.prompt_learning.search_gepa import GepaTracker

__all__ = ["GepaExecutor", "GepaSettings", "parse_gepa_settings"]

DEFAULT_BUDGET = 300


@dataclass
class GepaSettings:
    common: PromptSettings
    budget: int
    max_concurrent: int
    minibatch_size: int
    train_seeds: list[int]
    val_seeds: list[int]
    test_seeds: list[int]
    val_split: str
    rng_seed: int
    use_merge: bool
    max_proposals: int | None
    patience: int | None
    top_k: int
    max_seconds: float | None


def _seed_pools(g: dict[str, Any], pl: dict[str, Any]) -> tuple[list[int], list[int], list[int]]:
    """The feedback (train), Pareto (validation) and held-out (test) seeds, nested keys before flat aliases."""
    train = seed_list(get_path(g, "evaluation.train_seeds", "evaluation.seeds", "evaluation_seeds",
                               default=pl.get("train_seeds")), "prompt_learning.gepa.evaluation.train_seeds",
                      required=True)
    val = seed_list(get_path(g, "evaluation.val_seeds", "evaluation.validation_seeds", "validation_seeds",
                             default=pl.get("validation_seeds")), "prompt_learning.gepa.evaluation.val_seeds",
                    required=True)
    test = seed_list(get_path(g, "evaluation.test_pool", "test_pool", default=pl.get("test_pool")),
                     "prompt_learning.gepa.evaluation.test_pool", required=False)
    return train, val, test


def _population_limits(g: dict[str, Any]) -> tuple[float, int | None, int | None]:
    """``(crossover_rate, proposal cap, patience in proposals)`` from ``[prompt_learning.gepa.population]``."""
    population = as_table(g.get("population"))
    crossover = float(population.get("crossover_rate", g.get("crossover_rate", 0.0)) or 0.0)
    generations, children = population.get("num_generations"), population.get("children_per_generation")
    patience = population.get("patience_generations", g.get("patience_generations"))
    max_proposals = (generations * children if isinstance(generations, int) and isinstance(children, int)
                     and generations > 0 and children > 0 else None)
    per_generation = children if isinstance(children, int) and children > 0 else 1
    return crossover, max_proposals, patience * per_generation if isinstance(patience, int) and patience > 0 else None


def parse_gepa_settings(body: dict[str, Any]) -> GepaSettings:
    pl = section(body)
    g = pl.get("gepa")
    if not isinstance(g, dict):
        raise ExecutorInputError("prompt_learning.gepa is required for algorithm = \"gepa\" (at least its "
                                 "[prompt_learning.gepa.evaluation] train_seeds and val_seeds)")
    proposer = proposer_spec(
        g, model_keys=("mutation.llm_model", "mutation_llm_model"),
        provider_keys=("mutation.llm_provider", "mutation_llm_provider"),
        url_keys=("mutation.llm_inference_url", "mutation_llm_inference_url"),
        key_env_keys=("mutation.api_key_env",), temperature_keys=("mutation.temperature",),
        max_tokens_keys=("mutation.max_tokens",), prompt_keys=("mutation.prompt", "mutation_prompt", "metaprompt"),
        local_model_key="mutation.local_model", section_key="gepa")
    common = parse_prompt_settings(body, "gepa", proposer)
    termination = common.termination
    cap, cap_key = rollout_cap({
        "prompt_learning.gepa.rollout.budget": get_path(g, "rollout.budget", "rollout_budget"),
        "prompt_learning.termination_config.max_rollouts": termination.get("max_rollouts")})
    budget, budget_key = (cap, cap_key) if cap is not None else (DEFAULT_BUDGET, "prompt_learning.gepa.rollout.budget")
    train, val, test = _seed_pools(g, pl)
    minibatch = positive_int(get_path(g, "rollout.minibatch_size", "minibatch_size", default=8),
                             "prompt_learning.gepa.rollout.minibatch_size") or 8
    concurrent = positive_int(get_path(g, "rollout.max_concurrent", "max_concurrent_rollouts", default=20),
                              "prompt_learning.gepa.rollout.max_concurrent") or 20
    if budget < len(val):
        raise ExecutorInputError(f"{budget_key} ({budget}) is smaller than the "
                                 f"{len(val)} validation seeds the baseline needs; raise it or use fewer val_seeds")
    modules = g.get("modules") or []
    check_modules([m.get("module_id") if isinstance(m, dict) else m for m in modules], common,
                  "prompt_learning.gepa.modules")
    crossover, max_proposals, patience = _population_limits(g)
    top_k = positive_int(get_path(g, "evaluation.validation_top_k", "validation_top_k", default=3),
                         "prompt_learning.gepa.evaluation.validation_top_k") or 3
    max_seconds = termination.get("max_time_seconds")
    return GepaSettings(
        common=common, budget=budget, max_concurrent=concurrent, minibatch_size=minibatch, train_seeds=train,
        val_seeds=val, test_seeds=test,
        val_split=str(get_path(g, "evaluation.validation_pool", "validation_pool") or common.train_split),
        rng_seed=int(g.get("rng_seed") or 0), use_merge=crossover > 0 and len(common.components) > 1,
        max_proposals=max_proposals, patience=patience, top_k=top_k,
        max_seconds=float(max_seconds) if isinstance(max_seconds, int | float) else None)


def _search(ctx: JobContext, s: GepaSettings, rt: PromptRuntime) -> tuple[GepaTracker, str]:
    """Run ``gepa.optimize`` under our stop rules; returns the tracker (candidates seen) and why it stopped."""
    import gepa  # imported when a job runs, not when one is validated

    from synth_nb.local.executors.prompt_learning.search_gepa import GepaTracker, StopRules, TaskAppAdapter

    roles = {m.component: m.role for m in s.common.messages if m.component}
    tracker = GepaTracker(ctx, rt.reporter, rt.runner, s.val_seeds, rt.proposer.kind, roles, proposer=rt.proposer)
    stop = StopRules(ctx, rt.runner, iteration_cost=2 * s.minibatch_size, max_seconds=s.max_seconds,
                     max_proposals=s.max_proposals, patience=s.patience, tracker=tracker)
    try:
        gepa.optimize(
            seed_candidate=s.common.components,
            trainset=[{"seed": seed, "split": s.common.train_split} for seed in s.train_seeds],
            valset=[{"seed": seed, "split": s.val_split} for seed in s.val_seeds],
            adapter=TaskAppAdapter(rt.runner, rt.router),
            custom_candidate_proposer=rt.proposer.gepa_proposer(),
            reflection_minibatch_size=s.minibatch_size, candidate_selection_strategy="pareto",
            use_merge=s.use_merge, max_metric_calls=s.budget,
            stop_callbacks=[stop],
            callbacks=[tracker],
            logger=_QuietLogger(), seed=s.rng_seed, raise_on_exception=True, display_progress_bar=False)
    except Exception as exc:
        halted = exc if isinstance(exc, SearchHalted) else getattr(exc, "__cause__", None)
        if not isinstance(halted, SearchHalted):
            raise
        return tracker, halted.reason
    return tracker, stop.reason or "budget_exhausted"


class GepaExecutor(SearchExecutor):
    name = "gepa"

    def parse_settings(self, body: dict[str, Any]) -> GepaSettings:
        return parse_gepa_settings(body)

    def run(self, ctx: JobContext) -> None:
        s = parse_gepa_settings(ctx.body)
        ctx.emit("prompt.learning.gepa.start", "Starting GEPA optimisation", {
            "rollout_budget": s.budget, "minibatch_size": s.minibatch_size, "max_concurrent": s.max_concurrent,
            "train_seeds": len(s.train_seeds), "val_seeds": len(s.val_seeds), "test_pool": len(s.test_seeds),
            "use_merge": s.use_merge, "rng_seed": s.rng_seed, "components": list(s.common.components)})
        with PromptRuntime(ctx, s.common, budget=s.budget, max_concurrent=s.max_concurrent,
                           seed=s.rng_seed) as rt:
            rt.reporter.transformations_planned = s.max_proposals
            test_split = seed_split(rt.taskset, s.common.train_split) if s.test_seeds else s.val_split
            ctx.emit("prompt.learning.rollouts.start", f"Starting rollouts: {len(s.train_seeds)} seeds",
                     {"train_seeds": s.train_seeds, "validation_seeds": s.val_seeds, "test_pool": s.test_seeds,
                      "validation_split": s.val_split, "test_split": test_split})
            tracker, reason = _search(ctx, s, rt)
            stopped = rt.outcome(tracker.candidates, reason, budget_key="prompt_learning.gepa.rollout.budget",
                                 heldout_seeds=s.test_seeds or s.val_seeds, heldout_split=test_split,
                                 top_k=s.top_k)
            if stopped is None:
                return
            outcome, reason = stopped
            rt.reporter.complete(outcome, reason)  # results on the status document before the terminal event
            ctx.emit("prompt.learning.gepa.complete", f"GEPA finished: best score {outcome.best_score}",
                     {"best_score": outcome.best_score, "finish_reason": reason,
                      "candidates": len(tracker.candidates), "proposals": tracker.proposals})


class _QuietLogger:
    """gepa logs to stdout by default; a backend's stdout is not the place for it."""

    def log(self, message: str) -> None:
        pass
