"""The GEPA search on ``gepa.optimize``: the task-app adapter, the stop rules and the event callbacks.

The adapter scores a candidate by running task-app rollouts through its own interceptor URL. Budget and
cancellation are enforced here, not by the package: each batch reserves its rollouts first, and a batch
that would exceed the budget (or a cancellation) raises ``rollouts.SearchHalted``, which unwinds ``gepa.optimize``;
the candidates seen so far are kept by the callbacks, so the best one survives.

Metric points: ``gepa.trial.score`` (step = rollouts used, value = minibatch mean), ``gepa.best_score``
(step = rollouts used, value = best validation mean so far), ``gepa.candidate.val_score`` (step = candidate
index), ``gepa.transformation.mean_score`` (step = proposal number; the name 0.2.24's CLI shows).

Every proposal, kept or not: ``gepa.transformation.proposed`` (parent, the proposed text, and what the
proposer was asked and answered: ``proposer_input`` / ``proposer_output``, each cut to ``EXCHANGE_CHARS``
with its full length in ``*_chars``), then ``prompt.learning.proposal.scored`` (``score``: its minibatch
mean; ``parent_score``: its parent's on the same minibatch; ``accepted``; ``reason``: why it was kept or not).
"""

from __future__ import annotations

import time
from typing import Any

from gepa.core.adapter import EvaluationBatch

from synth_nb.local.executors.base import JobContext
from synth_nb.local.executors.prompt_learning.proposers import exchange_fields
from synth_nb.local.executors.prompt_learning.report import Candidate, Reporter
from synth_nb.local.executors.prompt_learning.rollouts import Rollout, TaskAppRunner
from synth_nb.local.executors.prompt_learning.router import CandidateRouter

__all__ = ["GepaTracker", "StopRules", "TaskAppAdapter"]


class TaskAppAdapter:
    """``GEPAAdapter`` over the task app; data instances are ``{"seed": int, "split": str}``."""

    propose_new_texts = None

    def __init__(self, runner: TaskAppRunner, router: CandidateRouter) -> None:
        self.runner = runner
        self.router = router
        self.batches = 0

    def evaluate(self, batch: list[dict[str, Any]], candidate: dict[str, str],
                 capture_traces: bool = False) -> EvaluationBatch:
        url = self.router.url_for(candidate)
        self.batches += 1
        results: list[Rollout] = []
        for split in dict.fromkeys(inst["split"] for inst in batch):
            seeds = [inst["seed"] for inst in batch if inst["split"] == split]
            results += self.runner.run(url, seeds, split, tag=f"b{self.batches}")
        order = {(r.split, r.seed): r for r in results}
        ordered = [order[(inst["split"], inst["seed"])] for inst in batch]
        errors = [r.error for r in ordered if r.error]
        if ordered and len(errors) == len(ordered):
            raise RuntimeError(f"every rollout of a batch failed; first error: {errors[0]}")
        return EvaluationBatch(outputs=[{"predicted": r.predicted, "expected": r.expected} for r in ordered],
                               scores=[r.score for r in ordered],
                               trajectories=ordered if capture_traces else None)

    def make_reflective_dataset(self, candidate: dict[str, str], eval_batch: EvaluationBatch,
                                components_to_update: list[str]) -> dict[str, list[dict[str, Any]]]:
        records = [{"Inputs": r.query, "Generated Outputs": r.predicted or "", "Feedback": r.feedback,
                    "query": r.query, "expected": r.expected, "correct": r.score >= 1.0}
                   for r in (eval_batch.trajectories or [])]
        return {name: records for name in components_to_update}


class StopRules:
    """Checked by gepa before each iteration; remembers why it stopped."""

    def __init__(self, ctx: JobContext, runner: TaskAppRunner, *, iteration_cost: int,
                 max_seconds: float | None, max_proposals: int | None, patience: int | None,
                 tracker: GepaTracker) -> None:
        self.ctx, self.runner, self.iteration_cost = ctx, runner, iteration_cost
        self.max_seconds, self.max_proposals, self.patience = max_seconds, max_proposals, patience
        self.tracker = tracker
        self.started = time.monotonic()
        self.reason: str | None = None

    def __call__(self, state: Any) -> bool:
        remaining = self.runner.budget.remaining
        checks = [
            ("cancelled", self.ctx.cancelled.is_set()),
            ("budget_exhausted", remaining is not None and remaining < self.iteration_cost),
            ("timeout", self.max_seconds is not None and time.monotonic() - self.started >= self.max_seconds),
            ("max_proposals", self.max_proposals is not None and state.i + 1 >= self.max_proposals),
            ("no_improvement", self.patience is not None
             and state.i + 1 - self.tracker.best_iteration >= self.patience),
        ]
        for reason, hit in checks:
            if hit:
                self.reason = self.reason or reason
                return True
        return False


class GepaTracker:
    """gepa callbacks -> our candidate registry, Synth-style events and metric points."""

    def __init__(self, ctx: JobContext, reporter: Reporter, runner: TaskAppRunner, val_seeds: list[int],
                 proposer_kind: str, messages_by_component: dict[str, str], proposer: Any = None) -> None:
        self.ctx, self.reporter, self.runner = ctx, reporter, runner
        #: the ``Proposer`` (its ``last_exchange``: what it was asked and answered for the newest proposal)
        self.proposer = proposer
        self.val_seeds = val_seeds
        self.proposer_kind = proposer_kind
        self.roles = messages_by_component
        self.candidates: list[Candidate] = []
        self.best_iteration = 0
        self.trial = 0
        self.proposals = 0
        self._parent: int | None = None
        self._last_child_mean: float | None = None
        self._last_parent_mean: float | None = None
        self._iteration = 0

    def _rollouts(self) -> int:
        return self.runner.budgeted_done

    def on_iteration_start(self, ev: dict[str, Any]) -> None:
        self._iteration = int(ev["iteration"])

    def on_candidate_selected(self, ev: dict[str, Any]) -> None:
        self._parent = int(ev["candidate_idx"])

    def on_evaluation_end(self, ev: dict[str, Any]) -> None:
        scores = list(ev.get("scores") or [])
        if not scores:
            return
        self.trial += 1
        mean = sum(scores) / len(scores)
        is_child = ev.get("candidate_idx") is None
        if is_child:
            self._last_child_mean = mean
        else:  # the parent on the same minibatch, which the proposal must beat to be kept
            self._last_parent_mean = mean
        label = "proposal" if is_child else f"candidate {ev.get('candidate_idx')}"
        best = self.reporter.best_score
        self.ctx.emit("prompt.learning.trial.results",
                      f"[Trial {self.trial}] {label} mean={mean:.3f} (N={len(scores)}/{len(scores)})",
                      {"trial": self.trial, "mean": mean, "completed": len(scores), "total": len(scores),
                       "kind": "proposal" if is_child else "parent", "candidate_index": ev.get("candidate_idx"),
                       "iteration": self._iteration, "best_score": best})
        self.ctx.emit("prompt.learning.trial.complete", f"trial {self.trial} score={mean:.3f}",
                      {"trial": self.trial, "score": mean, "num_seeds": len(scores)})
        self.ctx.metric("gepa.trial.score", self._rollouts(), mean,
                        {"n": len(scores), "trial": self.trial, "kind": "proposal" if is_child else "parent"})

    def on_proposal_end(self, ev: dict[str, Any]) -> None:
        self.proposals += 1
        self.reporter.transformations_tried = self.proposals
        parent = self.candidates[self._parent] if self._parent is not None and self._parent < len(self.candidates) else None
        replacements = [{"apply_to_role": self.roles.get(name, "system"),
                         "old_text": parent.components.get(name, "") if parent else "", "new_text": text}
                        for name, text in (ev.get("new_instructions") or {}).items()]
        self.ctx.emit("gepa.transformation.proposed", f"proposed transformation t_{self.proposals:04d}", {
            "generation": self._iteration, "mutation_type": self.proposer_kind, "operator": "reflective_rewrite",
            "transformation_id": f"t_{self.proposals:04d}", "parent_id": self._parent,
            "transformation_text": "\n\n".join(r["new_text"] for r in replacements),
            "transformation_dict": {"text_replacements": replacements}, "mutation_params": {},
            **self._exchange()})

    def _exchange(self) -> dict[str, Any]:
        return exchange_fields(getattr(self.proposer, "last_exchange", None))

    def _proposal_scored(self, accepted: bool, candidate_index: int | None) -> None:
        mean = self._last_child_mean
        if mean is None:
            return
        verdict = "accepted" if accepted else "rejected"
        parent = self._last_parent_mean
        against = f"its parent's {parent:.3f}" if parent is not None else "its parent's score"
        reason = (f"minibatch score {mean:.3f} beat {against} on the same minibatch: kept as candidate "
                  f"{candidate_index}" if accepted else
                  f"minibatch score {mean:.3f} did not beat {against} on the same minibatch")
        self.ctx.emit("prompt.learning.proposal.scored",
                      f"proposal[{self.proposals}] train_accuracy={mean:.3f} {verdict}",
                      {"score": mean, "accepted": accepted, "proposal": self.proposals,
                       "candidate_index": candidate_index, "parent_id": self._parent,
                       "parent_score": parent, "reason": reason})
        self.ctx.metric("gepa.transformation.mean_score", self.proposals, mean,
                        {"n": None, "kind": "variation", "index": self.proposals, "accepted": accepted})
        self._last_child_mean = None

    def on_candidate_accepted(self, ev: dict[str, Any]) -> None:
        self._proposal_scored(True, int(ev["new_candidate_idx"]))

    def on_candidate_rejected(self, ev: dict[str, Any]) -> None:
        self._proposal_scored(False, None)

    def on_merge_accepted(self, ev: dict[str, Any]) -> None:
        self.ctx.emit("prompt.learning.gepa.merge", "merge accepted",
                      {"accepted": True, "parent_ids": list(ev.get("parent_ids") or []),
                       "candidate_index": ev.get("new_candidate_idx")})

    def on_merge_rejected(self, ev: dict[str, Any]) -> None:
        self.ctx.emit("prompt.learning.gepa.merge", "merge rejected",
                      {"accepted": False, "parent_ids": list(ev.get("parent_ids") or []), "reason": ev.get("reason")})

    def on_valset_evaluated(self, ev: dict[str, Any]) -> None:
        idx = int(ev["candidate_idx"])
        parents = [int(p) for p in (ev.get("parent_ids") or []) if p is not None]
        scores = {self.val_seeds[int(k)]: float(v) for k, v in (ev.get("scores_by_val_id") or {}).items()}
        generation = 1 + max((self.candidates[p].generation for p in parents if p < len(self.candidates)), default=-1)
        cand = Candidate(idx=idx, components=dict(ev["candidate"]), parents=parents, generation=generation,
                         origin="seed" if idx == 0 else ("merge" if len(parents) > 1 else "reflection"),
                         score=float(ev["average_score"]), instance_scores=scores)
        while len(self.candidates) <= idx:
            self.candidates.append(cand)
        self.candidates[idx] = cand
        previous = self.reporter.best_score
        is_best = previous is None or cand.score > previous  # type: ignore[operator]
        if is_best:
            self.reporter.best_score = cand.score
            self.best_iteration = max(self._iteration, 0)
        rollouts = self._rollouts()
        self.ctx.emit("prompt.learning.candidate.evaluated",
                      f"candidate {idx} val_accuracy={cand.score:.3f} (N={len(scores)})"
                      + (" new best" if is_best and idx else ""),
                      {"candidate_index": idx, "score": cand.score, "parents": parents, "generation": generation,
                       "num_seeds": len(scores), "is_best": is_best, "is_baseline": idx == 0, "rollouts": rollouts,
                       **self.reporter.candidate_fields(cand)})
        if is_best and idx:
            self.ctx.emit("prompt.learning.gepa.new_best", f"new best candidate {idx}: {cand.score:.3f}",
                          {"candidate_index": idx, "best_score": cand.score, "previous_best": previous})
        self.ctx.metric("gepa.candidate.val_score", idx, float(ev["average_score"]),
                        {"n": len(scores), "generation": generation})
        self.ctx.metric("gepa.best_score", rollouts, float(self.reporter.best_score or 0.0), {"candidate_index": idx})
        self.reporter.progress(force=True)
