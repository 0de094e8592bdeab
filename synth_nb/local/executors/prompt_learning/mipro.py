"""Local MIPRO executor: instruction candidates × bootstrapped demo sets, searched with optuna TPE.

Reads ``[prompt_learning.mipro]``: ``bootstrap_train_seeds`` (baseline rollouts whose score reaches
``few_shot_score_threshold`` become demos), ``online_pool`` (minibatch and full evaluation), ``test_pool``
(held-out, after the search, outside the budget), ``reference_pool`` (grounds the instruction proposals;
defaults to the bootstrap rollouts), ``num_iterations`` × ``num_evaluations_per_iteration`` trials of
``batch_size`` seeds, ``max_instructions`` (instruction pool, default 6), ``max_demo_sets`` (default 6),
``max_demo_set_size`` (default 4), ``demo.include_empty`` (default true), ``full_eval_every_k`` (default 5),
``tpe.{n_startup_trials, n_candidates, prior_weight}``, ``rng_seed``, ``meta_model*``/``meta.*`` (proposer
model; ``meta.local_model`` for one the backend serves), ``max_wall_clock_seconds``; the smaller of ``termination_config.max_rollouts`` (where ``--max-rollouts`` is sent) and ``mipro.max_rollouts``
is a hard cap on search rollouts (bootstrap included).

Each ``mipro.instruction.proposed`` also carries GEPA's proposal fields (``transformation_id``, ``parent_id``
0: the seed prompt, ``text_replacements``, ``proposer_input`` / ``proposer_output`` cut to ``EXCHANGE_CHARS``).

Events: ``mipro.job.started``, ``mipro.bootstrap.progress``, ``mipro.instruction.proposed``,
``mipro.iteration.start``, ``mipro.trial.complete``, ``mipro.fulleval.complete``, ``mipro.new_incumbent``,
``mipro.iteration.complete``, ``mipro.optimization.exhausted``, ``mipro.baseline.test``,
``mipro.topk.evaluated``, ``mipro.test.complete``, ``mipro.budget.summary``, ``mipro.job.completed``,
``prompt.learning.mipro.complete``, ``prompt.learning.proposal.scored`` (one per proposed instruction when the
search ends: kept or not and why, see ``search_mipro``), plus the shared ones of ``report`` (progress, validation, best
prompt, final results, completed, billing). Metric points (what our chart reads): ``mipro.trial.score``,
``mipro.fulleval.score`` and ``mipro.best_score``, all with step = search rollouts used.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from synth_nb.local.errors import ExecutorInputError
from synth_nb.local.executors.base import JobContext
from synth_nb.local.executors.prompt_learning.proposers import exchange_fields
from synth_nb.local.executors.prompt_learning.rollouts import SearchHalted
from synth_nb.local.executors.prompt_learning.runtime import PromptRuntime, SearchExecutor, seed_split
from synth_nb.local.executors.prompt_learning.search_mipro import MiproSearch
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

__all__ = ["MiproExecutor", "MiproSettings", "parse_mipro_settings"]


@dataclass
class MiproSettings:
    common: PromptSettings
    bootstrap: list[int]
    online: list[int]
    test: list[int]
    reference: list[int]
    iterations: int
    per_iteration: int
    batch_size: int
    max_concurrent: int
    threshold: float
    max_instructions: int
    max_demo_sets: int
    max_demo_size: int
    include_empty: bool
    full_eval_every: int
    tpe: dict[str, Any]
    rng_seed: int
    max_rollouts: int | None
    max_seconds: float | None
    top_k: int


def _pos(m: dict[str, Any], default: int, *paths: str) -> int:
    return positive_int(get_path(m, *paths, default=default), f"prompt_learning.mipro.{paths[0]}") or default


def parse_mipro_settings(body: dict[str, Any]) -> MiproSettings:
    pl = section(body)
    m = pl.get("mipro")
    if not isinstance(m, dict):
        raise ExecutorInputError("prompt_learning.mipro is required for algorithm = \"mipro\" (at least "
                                 "bootstrap_train_seeds and online_pool)")
    proposer = proposer_spec(
        m, model_keys=("meta.model", "meta_model"), provider_keys=("meta.provider", "meta_model_provider"),
        url_keys=("meta.inference_url", "meta_model_inference_url"), key_env_keys=("meta.api_key_env",),
        temperature_keys=("meta.temperature", "meta_model_temperature"),
        max_tokens_keys=("meta.max_tokens", "meta_model_max_tokens"), prompt_keys=("metaprompt",),
        local_model_key="meta.local_model", section_key="mipro")
    common = parse_prompt_settings(body, "mipro", proposer)
    key = "prompt_learning.mipro."
    bootstrap = seed_list(get_path(m, "bootstrap_train_seeds", "seeds.bootstrap", default=pl.get("bootstrap_train_seeds")),
                          key + "bootstrap_train_seeds", required=True)
    online = seed_list(get_path(m, "online_pool", "seeds.online", default=pl.get("online_pool")),
                       key + "online_pool", required=True)
    test = seed_list(get_path(m, "test_pool", "seeds.test", default=pl.get("test_pool")), key + "test_pool",
                     required=False)
    reference = seed_list(get_path(m, "reference_pool", "seeds.reference", default=pl.get("reference_pool")),
                          key + "reference_pool", required=False)
    overlap = sorted(set(reference) & (set(bootstrap) | set(online) | set(test)))
    if overlap:
        raise ExecutorInputError(f"{key}reference_pool seeds must not overlap with bootstrap/online/test pools. "
                                 f"Found overlapping seeds: {overlap}")
    threshold = float(m.get("few_shot_score_threshold", 0.8))
    if not 0.0 <= threshold <= 1.0:
        raise ExecutorInputError(f"{key}few_shot_score_threshold must be between 0.0 and 1.0, got {threshold}")
    modules = m.get("modules") or []
    stage_ids = [st.get("stage_id") for mod in modules if isinstance(mod, dict)
                 for st in (mod.get("stages") or []) if isinstance(st, dict)]
    check_modules(stage_ids, common, key + "modules[].stages[].stage_id")
    cap, cap_key = rollout_cap({key + "max_rollouts": m.get("max_rollouts"),
                                "prompt_learning.termination_config.max_rollouts": common.termination.get("max_rollouts")})
    if cap is not None and cap < len(bootstrap):
        raise ExecutorInputError(f"{cap_key} ({cap}) is smaller than the {len(bootstrap)} bootstrap_train_seeds the "
                                 "baseline is scored on first; raise it or use fewer bootstrap seeds")
    max_seconds = get_path(m, "max_wall_clock_seconds", default=common.termination.get("max_time_seconds"))
    demo = as_table(m.get("demo"))
    return MiproSettings(
        common=common, bootstrap=bootstrap, online=online, test=test, reference=reference,
        iterations=_pos(m, 20, "num_iterations"), per_iteration=_pos(m, 5, "num_evaluations_per_iteration"),
        batch_size=_pos(m, 32, "batch_size"), max_concurrent=_pos(m, 20, "max_concurrent"), threshold=threshold,
        max_instructions=_pos(m, 6, "max_instructions"), max_demo_sets=_pos(m, 6, "max_demo_sets"),
        max_demo_size=_pos(m, 4, "max_demo_set_size", "demo.max_few_shot_examples"),
        include_empty=bool(demo.get("include_empty", True)), full_eval_every=_pos(m, 5, "full_eval_every_k"),
        tpe=as_table(m.get("tpe")),
        rng_seed=int(m.get("rng_seed", pl.get("rng_seed", 0)) or 0),
        max_rollouts=cap,
        max_seconds=float(max_seconds) if isinstance(max_seconds, int | float) else None,
        top_k=_pos(m, 3, "top_k"))


def _demo_sets(demos: list[tuple[str, str]], s: MiproSettings, rng: random.Random) -> list[list[tuple[str, str]]]:
    sets: list[list[tuple[str, str]]] = [[]] if s.include_empty else []
    attempts = 0
    while len(sets) < s.max_demo_sets and demos and attempts < 8 * s.max_demo_sets:
        attempts += 1
        chosen = rng.sample(demos, k=rng.randint(1, min(s.max_demo_size, len(demos))))
        if chosen not in sets:
            sets.append(chosen)
    return sets or [[]]


class MiproExecutor(SearchExecutor):
    name = "mipro"

    def parse_settings(self, body: dict[str, Any]) -> MiproSettings:
        return parse_mipro_settings(body)

    def run(self, ctx: JobContext) -> None:
        s = parse_mipro_settings(ctx.body)
        rng = random.Random(s.rng_seed)
        component = next(iter(s.common.components))
        ctx.emit("mipro.job.started", "Starting MIPRO optimisation",
                 {"num_iterations": s.iterations, "num_trials_per_iteration": s.per_iteration,
                  "batch_size": s.batch_size, "max_rollouts": s.max_rollouts, "component": component})
        with PromptRuntime(ctx, s.common, budget=s.max_rollouts, max_concurrent=s.max_concurrent,
                           seed=s.rng_seed) as rt:
            split = s.common.train_split
            test_split = seed_split(rt.taskset, split) if s.test else split
            ctx.emit("prompt.learning.rollouts.start", f"Starting rollouts: {len(s.bootstrap)} seeds",
                     {"train_seeds": s.bootstrap, "online_pool": s.online, "test_pool": s.test,
                      "test_split": test_split})
            proposals = self._propose(ctx, s, rt, component, rng)
            if proposals is None:
                return
            instructions, sets = proposals
            search = MiproSearch(ctx, rt.runner, rt.router, rt.reporter, base=s.common.components,
                                 component=component, instructions=instructions, demo_sets=sets, online=s.online,
                                 split=split, batch_size=s.batch_size, iterations=s.iterations,
                                 per_iteration=s.per_iteration, full_eval_every=s.full_eval_every, tpe=s.tpe,
                                 seed=s.rng_seed, max_seconds=s.max_seconds)
            rt.reporter.transformations_planned = s.iterations * s.per_iteration
            reason = search.run()
            stopped = rt.outcome(search.candidates, reason, budget_key="termination_config.max_rollouts",
                                 heldout_seeds=s.test or s.online,
                                 heldout_split=test_split if s.test else split, top_k=s.top_k)
            if stopped is None:
                return
            outcome, reason = stopped
            self._mipro_results(ctx, rt, search, outcome, instructions, sets, component)
            rt.reporter.complete(outcome, reason)  # results on the status document before the terminal events
            local = rt.settings.policy.kind != "upstream" and rt.proposer.kind == "offline"
            best_full = search.incumbent.score if search.incumbent else None
            ctx.emit("mipro.job.completed", f"MIPRO finished: best score {outcome.best_score}",
                     {"best_score": outcome.best_score, "best_full_score": best_full, "trials": search.trials,
                      "instructions": len(instructions), "demo_sets": len(sets),
                      **({"policy_cost_usd": 0.0, "proposal_cost_usd": 0.0} if local else {})})
            ctx.emit("prompt.learning.mipro.complete", "MIPRO complete",
                     {"best_prompt": outcome.best_prompt, "best_score": outcome.best_score})

    def _propose(self, ctx: JobContext, s: MiproSettings, rt: PromptRuntime, component: str,
                 rng: random.Random) -> tuple[list[str], list[list[tuple[str, str]]]] | None:
        """Bootstrap demos and propose instructions: the search space; None when halted meanwhile."""
        base, split = s.common.components, s.common.train_split
        try:
            url = rt.router.url_for(base)
            boot = rt.runner.run(url, s.bootstrap, split, tag="bootstrap")
            reference = rt.runner.run(url, s.reference, split, tag="reference") if s.reference else boot
        except SearchHalted:
            return None
        demos = [(r.query, str(r.expected)) for r in boot if r.score >= s.threshold and r.expected]
        ctx.emit("mipro.bootstrap.progress", f"bootstrapped {len(demos)} demos from {len(boot)} rollouts",
                 {"demos": len(demos), "rollouts": len(boot), "threshold": s.threshold})
        records = [{"query": r.query, "expected": r.expected, "correct": r.score >= 1.0, "Inputs": r.query,
                    "Generated Outputs": r.predicted or "", "Feedback": r.feedback} for r in reference]
        proposed = rt.proposer.instruction_proposals(base[component], records, s.max_instructions, rng)
        role = next((m.role for m in s.common.messages if m.component == component), "system")
        for i, (text, exchange) in enumerate(proposed[1:], start=1):
            replacement = {"apply_to_role": role, "old_text": base[component], "new_text": text}
            ctx.emit("mipro.instruction.proposed", f"instruction {i} proposed by the {rt.proposer.kind} proposer",
                     {"iteration": 0, "stage_id": component, "module_id": component, "instruction_id": i,
                      "instruction_text": text, "instruction_lines": text.splitlines(), "demo_indices": [],
                      "proposal_id": f"p_{i:03d}", "proposer": rt.proposer.kind,
                      # the fields of GEPA's proposals: one reader shows both searches' proposals
                      "transformation_id": f"p_{i:03d}", "parent_id": 0, "operator": "instruction_proposal",
                      "transformation_dict": {"text_replacements": [replacement]}, **exchange_fields(exchange)})
        return [text for text, _ in proposed], _demo_sets(demos, s, rng)

    def _mipro_results(self, ctx: JobContext, rt: PromptRuntime, search: Any, outcome: Any,
                       instructions: list[str], sets: list[list[tuple[str, str]]], component: str) -> None:
        base_held = outcome.baseline_heldout
        seeds = outcome.heldout_seeds
        if base_held is not None:
            ctx.emit("mipro.baseline.test", f"baseline test score {base_held:.3f}",
                     {"score": base_held, "test_score": base_held, "seeds": seeds})
        for rank, cand in enumerate((c for c in outcome.ranked[:3] if c.idx in outcome.heldout), start=1):
            rolls = outcome.heldout[cand.idx]
            test_score = sum(r.score for r in rolls) / len(rolls)
            lift = test_score - base_held if base_held is not None else None
            i, d = cand.extra["instruction_index"], cand.extra["demo_index"]
            ctx.emit("mipro.topk.evaluated", f"rank {rank}: train {cand.score:.3f} test {test_score:.3f}", {
                "rank": rank, "train_score": cand.score, "test_score": test_score, "lift_absolute": lift,
                "lift_percent": (lift / base_held * 100.0) if lift is not None and base_held else None,
                "instruction_text": instructions[i], "instruction_lines": instructions[i].splitlines(),
                "instruction_indices": [i], "demo_indices": [d], "candidate_index": cand.idx,
                "stage_payloads": {component: {"module_id": component, "instruction_indices": [i], "demo_indices": [d]}},
                "test_per_seed": {str(r.seed): r.score for r in rolls},
                "test_seed_scores": [{"seed": r.seed, "score": r.score} for r in rolls], "test_seeds": seeds})
        ctx.emit("mipro.test.complete", "held-out evaluation done", {"num_seeds": len(seeds)})
        local = rt.settings.policy.kind != "upstream" and rt.proposer.kind == "offline"
        ctx.emit("mipro.budget.summary", "token usage", {
            "category_costs": {"rollout": 0.0, "proposal": 0.0} if local else {},
            "policy_tokens": rt.router.prompt_tokens + rt.router.completion_tokens,
            "proposer_tokens": rt.proposer.prompt_tokens + rt.proposer.completion_tokens})
