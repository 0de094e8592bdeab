"""Progress, held-out evaluation and the result events both prompt-learning executors emit.

Event types and data fields follow what synth-ai 0.2.24 reads:
``prompt.learning.progress``, ``…validation.scored``, ``…validation.summary``, ``…best.prompt``,
``…top.prompt.content``, ``…final.results``, ``…completed``, ``…billing.end``. Local extras: ``proposer``,
``policy`` and ``heldout_rollouts`` in ``…completed``, ``candidate_index``/``parents``/``generation`` in
candidate entries, and ``candidate_fields`` (per-seed scores, prompt) on the events that report a candidate
as soon as it is scored. Costs are 0.0 when every model ran locally (a local model server included), the sum
of the answers' ``usage.cost`` when a remote model reports one, and omitted otherwise; ``…completed`` also
carries each model's calls, mean and max latency and completion tokens per second of model time.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from synth_nb.local.executors.base import JobContext
from synth_nb.local.executors.prompt_learning.proposers import Proposer
from synth_nb.local.executors.prompt_learning.rollouts import Rollout, SearchHalted, TaskAppRunner
from synth_nb.local.executors.prompt_learning.router import CandidateRouter, render_sections
from synth_nb.local.executors.prompt_learning.settings import PromptSettings

__all__ = ["Candidate", "Outcome", "Reporter"]


@dataclass
class Candidate:
    idx: int
    components: dict[str, str]
    parents: list[int] = field(default_factory=list)
    generation: int = 0
    origin: str = "seed"
    score: float | None = None
    instance_scores: dict[int, float] = field(default_factory=dict)
    minibatch_score: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """What the held-out evaluation found; ``heldout`` maps candidate index -> its held-out rollouts."""

    best: Candidate
    best_score: float | None
    baseline: Candidate
    baseline_heldout: float | None
    best_prompt: dict[str, Any]
    ranked: list[Candidate]
    heldout: dict[int, list[Rollout]]
    heldout_seeds: list[int]


def _mean(rollouts: list[Rollout]) -> float:
    return sum(r.score for r in rollouts) / len(rollouts) if rollouts else 0.0


class Reporter:
    """Owns the clock, the throttled progress events and the end-of-job result events."""

    def __init__(self, ctx: JobContext, settings: PromptSettings, *, budget_total: int | None,
                 router: CandidateRouter, proposer: Proposer) -> None:
        self.ctx = ctx
        self.settings = settings
        self.budget_total = budget_total
        self.router = router
        self.proposer = proposer
        self.runner: TaskAppRunner | None = None
        self.started = time.monotonic()
        self.best_score: float | None = None
        self.transformations_tried = 0
        self.transformations_planned: int | None = None
        self._last_progress = 0.0
        self._lock = threading.Lock()

    # -- progress -------------------------------------------------------------------------------------
    def on_rollout(self, rollout: Rollout) -> None:
        self.progress()

    def progress(self, *, force: bool = False) -> None:
        now = time.monotonic()
        with self._lock:
            if not force and now - self._last_progress < 0.5:
                return
            self._last_progress = now
        done = self.runner.budgeted_done if self.runner else 0
        total = self.budget_total
        elapsed = now - self.started
        fraction = min(1.0, done / total) if total else None
        # no ETA from the first few rollouts: they carry the job's start-up (1 of 1,000 after 0.3 s read as
        # nearly 4 minutes for a job that ended 0.6 s later); the client extrapolates from the same share
        eta = elapsed * (1 - fraction) / fraction if fraction and fraction >= 0.05 else None
        tokens = self.router.prompt_tokens + self.router.completion_tokens
        data: dict[str, Any] = {
            "rollouts_completed": done, "rollouts_total": total, "rollout_budget": total,
            "rollouts_remaining": None if total is None else max(0, total - done),
            "percent_rollouts": fraction, "percent_overall": fraction,
            "transformations_tried": self.transformations_tried,
            "transformations_planned": self.transformations_planned,
            "percent_transformations": (self.transformations_tried / self.transformations_planned
                                        if self.transformations_planned else None),
            "rollout_tokens_used": tokens, "elapsed_seconds": round(elapsed, 2),
            "eta_seconds": None if eta is None else round(eta, 1), "best_score": self.best_score,
        }
        pct = f"{fraction * 100:.0f}% complete; " if fraction is not None else ""
        eta_text = f", eta={eta:.0f}s" if eta is not None else ""
        self.ctx.emit("prompt.learning.progress",
                      f"{pct}rollouts={done}/{total if total else 'NA'}; tokens={tokens / 1e6:.2f}M/NA; "
                      f"elapsed={elapsed:.0f}s{eta_text}", data)

    # -- end of job -----------------------------------------------------------------------------------
    def _replacements(self, cand: Candidate) -> list[dict[str, str]]:
        return [{"apply_to_role": m.role, "old_text": m.pattern, "new_text": cand.components[m.component]}
                for m in self.settings.messages
                if m.component and cand.components.get(m.component, m.pattern) != m.pattern]

    def _entry(self, cand: Candidate, heldout: dict[int, list[Rollout]]) -> dict[str, Any]:
        seeds = sorted(cand.instance_scores)
        entry = {"candidate_index": cand.idx, "accuracy": cand.score, "prompt_length": self.prompt_length(cand),
                 "tool_call_rate": 1.0, "instance_scores": [cand.instance_scores[s] for s in seeds],
                 "seeds": seeds, "parents": cand.parents, "generation": cand.generation, "origin": cand.origin,
                 "object": {"text_replacements": self._replacements(cand)}, **cand.extra}
        if cand.idx in heldout:
            entry["heldout_accuracy"] = _mean(heldout[cand.idx])
        return entry

    def candidate_fields(self, cand: Candidate) -> dict[str, Any]:
        """What an explorer needs of a candidate as soon as it is scored: per-seed scores and its prompt
        (``instance_scores``/``seeds`` as in ``attempted_candidates``, ``template`` as in ``top.prompt.content``)."""
        seeds = sorted(cand.instance_scores)
        return {"instance_scores": [cand.instance_scores[s] for s in seeds], "seeds": seeds,
                "prompt_length": self.prompt_length(cand), "origin": cand.origin,
                "template": {"sections": render_sections(self.settings.messages, cand.components)}}

    def prompt_length(self, cand: Candidate) -> int:
        return sum(len(s["content"]) for s in render_sections(self.settings.messages, cand.components))

    def heldout(self, candidates: list[Candidate], *, seeds: list[int], split: str, top_k: int
                ) -> tuple[list[Candidate], dict[int, list[Rollout]]]:
        """Rank by search score; evaluate the baseline and the top ``top_k`` on the held-out ``seeds``."""
        ranked = sorted((c for c in candidates if c.score is not None), key=lambda c: (-(c.score or 0.0), c.idx))
        results: dict[int, list[Rollout]] = {}
        if not seeds or self.runner is None or self.ctx.cancelled.is_set():
            return ranked, results
        todo = [candidates[0], *ranked[:top_k]]
        distinct = list(dict.fromkeys(c.idx for c in todo))
        self.ctx.emit("prompt.learning.heldout.start",
                      f"scoring {len(distinct)} prompts (baseline and top candidates) on {len(seeds)} held-out "
                      f"seeds ({split} split)",
                      {"candidates": distinct, "seeds": seeds, "split": split})
        try:
            for cand in todo:
                if cand.idx not in results:
                    url = self.router.url_for(cand.components)
                    results[cand.idx] = self.runner.run(url, seeds, split, tag=f"heldout-c{cand.idx}", budgeted=False)
        except SearchHalted:
            pass
        return ranked, results

    def _validation(self, ranked: list[Candidate], baseline: Candidate, heldout: dict[int, list[Rollout]], *,
                    seeds: list[int], split: str, top_k: int) -> tuple[float | None, list[dict[str, Any]]]:
        """The held-out scores as ``validation.scored`` / ``validation.summary`` events; returns (baseline, rows)."""
        base_held = _mean(heldout[baseline.idx]) if baseline.idx in heldout else None
        if base_held is not None:
            self.ctx.emit("prompt.learning.validation.scored",
                          f"baseline val_accuracy={base_held:.3f} (N={len(seeds)})",
                          {"accuracy": base_held, "is_baseline": True, "seeds": seeds, "split": split,
                           "instance_scores": [r.score for r in heldout[baseline.idx]]})
        validation: list[dict[str, Any]] = []
        for rank, cand in enumerate(c for c in ranked[:top_k] if c.idx in heldout):
            acc = _mean(heldout[cand.idx])
            lift = acc - base_held if base_held is not None else None
            validation.append({"rank": rank, "accuracy": acc, "seeds": seeds, "candidate_index": cand.idx,
                               "train_accuracy": cand.score})
            self.ctx.emit("prompt.learning.validation.scored",
                          f"top[{rank}] val_accuracy={acc:.3f} (N={len(seeds)})"
                          + (f" lift={lift:+.3f}" if lift is not None else ""),
                          {"rank": rank, "accuracy": acc, "candidate_index": cand.idx, "lift": lift,
                           "train_accuracy": cand.score, "instance_scores": [r.score for r in heldout[cand.idx]]})
        if validation:
            self.ctx.emit("prompt.learning.validation.summary",
                          f"held-out baseline={base_held:.3f} best={validation[0]['accuracy']:.3f}",
                          {"baseline": {"accuracy": base_held, "seeds": seeds}, "results": validation,
                           "split": split})
        return base_held, validation

    def _top_prompts(self, ranked: list[Candidate], heldout: dict[int, list[Rollout]], top_k: int) -> None:
        for rank, cand in enumerate(ranked[:top_k], start=1):
            cand_sections = render_sections(self.settings.messages, cand.components)
            self.ctx.emit("prompt.learning.top.prompt.content", f"top prompt rank {rank}", {
                "rank": rank, "train_accuracy": cand.score,
                "val_accuracy": _mean(heldout[cand.idx]) if cand.idx in heldout else None,
                "template": {"sections": cand_sections}, "candidate_index": cand.idx,
                "full_text": "\n\n".join(f"[{s['role'].upper()}]: {s['content']}" for s in cand_sections)})

    def finish(self, candidates: list[Candidate], *, heldout_seeds: list[int], heldout_split: str,
               top_k: int) -> Outcome:
        """Held-out evaluation of the baseline and the top candidates, then the shared result events."""
        ranked, heldout = self.heldout(candidates, seeds=heldout_seeds, split=heldout_split, top_k=top_k)
        baseline = candidates[0]
        best = ranked[0] if ranked else baseline
        base_held, validation = self._validation(ranked, baseline, heldout, seeds=heldout_seeds,
                                                 split=heldout_split, top_k=top_k)
        best_held = _mean(heldout[best.idx]) if best.idx in heldout else None
        best_score = best_held if best_held is not None else best.score
        best_prompt = {"sections": render_sections(self.settings.messages, best.components)}
        self.ctx.emit("prompt.learning.best.prompt", f"best prompt: candidate {best.idx} score={best_score}",
                      {"best_prompt": best_prompt, "best_score": best_score, "candidate_index": best.idx})
        self._top_prompts(ranked, heldout, top_k)
        optimized = [{"rank": rank, "payload_kind": "transformation",
                      "score": {"accuracy": c.score, "prompt_length": self.prompt_length(c),
                                "instance_scores": [c.instance_scores[s] for s in sorted(c.instance_scores)]},
                      "object": {"data": {"text_replacements": self._replacements(c)}}, "candidate_index": c.idx}
                     for rank, c in enumerate(ranked[:top_k], start=1)]
        self.ctx.emit("prompt.learning.final.results", f"{len(candidates)} candidates, best score {best_score}", {
            "best_prompt": best_prompt, "best_score": best_score, "baseline_score": base_held,
            "attempted_candidates": [self._entry(c, heldout) for c in candidates],
            "optimized_candidates": optimized, "validation": validation})
        return Outcome(best, best_score, baseline, base_held, best_prompt, ranked, heldout, heldout_seeds)

    def _cost(self) -> dict[str, Any]:
        """Dollars from the answers' ``usage.cost``; 0.0 for a model run on this machine (offline, keyword or
        a local model server), no figure at all for a remote model that reports none."""
        policy, proposer = self.settings.policy, self.proposer
        parts = {"usd_tokens_rollouts": 0.0 if policy.kind != "upstream" or policy.local_model
                 else self.router.usage.cost_usd,
                 "usd_tokens_mutation": 0.0 if proposer.kind == "offline" or proposer.spec.local_model
                 else proposer.usage.cost_usd}
        if any(v is None for v in parts.values()):
            return {k: v for k, v in parts.items() if v is not None}
        return {**parts, "total_usd": sum(v for v in parts.values() if v is not None)}

    def complete(self, outcome: Outcome, finish_reason: str) -> dict[str, Any]:
        """The status-document fields (filled first, and returned), then ``prompt.learning.completed`` and
        ``billing.end``; the executor's terminal event comes after (later clients stop there)."""
        best, best_score, baseline = outcome.best, outcome.best_score, outcome.baseline
        base_held, best_prompt = outcome.baseline_heldout, outcome.best_prompt
        elapsed = time.monotonic() - self.started
        minutes = max(elapsed / 60.0, 1e-9)
        runner = self.runner
        rollouts = runner.budgeted_done if runner else 0
        heldout_n = runner.unbudgeted if runner else 0
        prompt_t, completion_t = self.router.prompt_tokens, self.router.completion_tokens
        cost = self._cost()
        data = {
            "finish_reason": finish_reason, "rollouts_completed": rollouts, "heldout_rollouts": heldout_n,
            "rollouts_prompt_tokens": prompt_t, "rollouts_completion_tokens": completion_t,
            "rollouts_unknown_tokens": 0, "token_count_rollouts": prompt_t + completion_t,
            "token_count_mutation": self.proposer.prompt_tokens + self.proposer.completion_tokens,
            "token_count_total": prompt_t + completion_t + self.proposer.prompt_tokens + self.proposer.completion_tokens,
            "rollouts_per_minute": (rollouts + heldout_n) / minutes,
            "tokens_per_minute": (prompt_t + completion_t) / minutes, "elapsed_seconds": round(elapsed, 3),
            "proposer": self.proposer.kind, "proposer_model": self.proposer.model,
            "proposer_fallbacks": self.proposer.fallbacks,
            "policy": self.settings.policy.kind, "policy_model": self.settings.policy.local_model or getattr(self.router.policy, "model", None),
            "policy_local_model": self.settings.policy.local_model, "proposer_local_model": self.proposer.spec.local_model,
            **self.router.usage.summary("policy"), **self.proposer.usage.summary("proposer"),
            "best_score": best_score, **cost,
        }
        result = {
            "best_score": best_score, "best_prompt": best_prompt, "best_snapshot": {"best_prompt": best_prompt},
            "baseline_score": base_held if base_held is not None else baseline.score,
            "best_train_score": best.score, "baseline_train_score": baseline.score,
            "best_candidate_index": best.idx, "finish_reason": finish_reason,
            "metadata": {"stats": {"total_rollouts": rollouts, "heldout_rollouts": heldout_n,
                                   "baseline_score": base_held if base_held is not None else baseline.score,
                                   "best_score": best_score, "total_time_seconds": round(elapsed, 3)}},
        }
        self.ctx.update_result(**result)
        why = (f" (stopped at the rollout budget {self.budget_total})"
               if finish_reason == "budget_exhausted" and self.budget_total else "")
        self.ctx.emit("prompt.learning.completed", f"finished: {finish_reason}{why}; {rollouts} rollouts "
                      f"(+{heldout_n} held-out) in {elapsed:.1f}s", data)
        self.ctx.emit("prompt.learning.billing.end", f"local run, {elapsed:.1f}s",
                      {"seconds": round(elapsed, 3), "total_usd": cost.get("total_usd"),
                       "tokens_usd": cost.get("total_usd")})
        return result
