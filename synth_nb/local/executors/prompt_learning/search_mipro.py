"""The MIPRO search: bootstrapped demo sets × proposed instructions, searched with optuna's TPE sampler.

Each trial asks TPE for an (instruction, demo set) pair, scores the assembled prompt on a random minibatch
of ``online_pool`` seeds and tells TPE the mean. Every ``full_eval_every_k`` trials the pair with the best
mean minibatch score that has not been fully evaluated is scored on the whole online pool; the best full
score is the incumbent. Demos are rendered into the rewritable message as ``Example: <query> => <label>``.

When the search ends (or is halted), one ``prompt.learning.proposal.scored`` per proposed instruction (1…):
``score`` its best pair's mean minibatch score, ``parent_score`` the seed instruction's (0) on the same
measure, ``accepted`` whether a pair of it was fully evaluated (a candidate, ``candidate_index``), and
``reason``: why it was kept or not (never tried, or never the best untested pair when a full evaluation came).

Metric points: ``mipro.trial.score`` (step = rollouts used, value = minibatch mean), ``mipro.fulleval.score``
(step = rollouts used), ``mipro.best_score`` (step = rollouts used, value = incumbent full score).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from synth_nb.local.executors.base import JobContext
from synth_nb.local.executors.prompt_learning.report import Candidate, Reporter
from synth_nb.local.executors.prompt_learning.rollouts import SearchHalted, TaskAppRunner
from synth_nb.local.executors.prompt_learning.router import CandidateRouter

__all__ = ["MiproSearch", "render_demos"]


def render_demos(instruction: str, demos: list[tuple[str, str]]) -> str:
    if not demos:
        return instruction
    return instruction.rstrip() + "\n\n" + "\n".join(f"Example: {q} => {label}" for q, label in demos)


@dataclass
class _Combo:
    instruction: int
    demos: int
    minibatch: list[float] = field(default_factory=list)
    candidate: Candidate | None = None

    @property
    def mean(self) -> float:
        return sum(self.minibatch) / len(self.minibatch) if self.minibatch else -1.0


class MiproSearch:
    def __init__(self, ctx: JobContext, runner: TaskAppRunner, router: CandidateRouter, reporter: Reporter, *,
                 base: dict[str, str], component: str, instructions: list[str], demo_sets: list[list[tuple[str, str]]],
                 online: list[int], split: str, batch_size: int, iterations: int, per_iteration: int,
                 full_eval_every: int, tpe: dict[str, Any], seed: int, max_seconds: float | None) -> None:
        self.ctx, self.runner, self.router, self.reporter = ctx, runner, router, reporter
        self.base, self.component = base, component
        self.instructions, self.demo_sets = instructions, demo_sets
        self.online, self.split = online, split
        self.batch_size = min(batch_size, len(online))
        self.iterations, self.per_iteration, self.full_eval_every = iterations, per_iteration, full_eval_every
        self.tpe, self.seed, self.max_seconds = tpe, seed, max_seconds
        self.rng = random.Random(seed)
        self.combos: dict[tuple[int, int], _Combo] = {}
        self.candidates: list[Candidate] = []
        self.incumbent: Candidate | None = None
        self.trials = 0
        #: the mean minibatch score each fully evaluated pair had when it was picked (what a pair had to beat)
        self.picked: list[float] = []
        self.started = time.monotonic()

    def _rollouts(self) -> int:
        return self.runner.budgeted_done

    def components(self, instruction: int, demos: int) -> dict[str, str]:
        text = render_demos(self.instructions[instruction], self.demo_sets[demos])
        return {**self.base, self.component: text}

    def _combo(self, instruction: int, demos: int) -> _Combo:
        return self.combos.setdefault((instruction, demos), _Combo(instruction, demos))

    def _score(self, combo: _Combo, seeds: list[int], tag: str) -> tuple[float, dict[int, float]]:
        url = self.router.url_for(self.components(combo.instruction, combo.demos))
        results = self.runner.run(url, seeds, self.split, tag=tag)
        errors = [r.error for r in results if r.error]
        if results and len(errors) == len(results):
            raise RuntimeError(f"every rollout of a batch failed; first error: {errors[0]}")
        return sum(r.score for r in results) / len(results), {r.seed: r.score for r in results}

    def full_eval(self, combo: _Combo, iteration: int, trial: int) -> None:
        if combo.minibatch:
            self.picked.append(combo.mean)
        score, per_seed = self._score(combo, self.online, f"full-i{combo.instruction}d{combo.demos}")
        cand = Candidate(idx=len(self.candidates), components=self.components(combo.instruction, combo.demos),
                         origin="baseline" if not self.candidates else "mipro", score=score,
                         instance_scores=per_seed, minibatch_score=combo.mean if combo.minibatch else None,
                         extra={"instruction_index": combo.instruction, "demo_index": combo.demos,
                                "demo_count": len(self.demo_sets[combo.demos])})
        combo.candidate = cand
        self.candidates.append(cand)
        rollouts = self._rollouts()
        self.ctx.emit("mipro.fulleval.complete", f"full eval i{combo.instruction}/d{combo.demos} score={score:.3f}",
                      {"score": score, "iteration": iteration, "trial": trial, "num_seeds": len(self.online),
                       "instruction_index": combo.instruction, "demo_index": combo.demos,
                       "candidate_index": cand.idx, "minibatch_score": cand.minibatch_score,
                       **self.reporter.candidate_fields(cand)})
        self.ctx.metric("mipro.fulleval.score", rollouts, score, {"n": len(self.online), "candidate_index": cand.idx})
        if self.incumbent is None or score > (self.incumbent.score or 0.0):
            self.incumbent = cand
            self.reporter.best_score = score
            self.ctx.emit("mipro.new_incumbent", f"[Trial {self.trials}] new incumbent {score:.3f}", {
                "minibatch_score": combo.mean if combo.minibatch else score, "best_score": score,
                "iteration": iteration, "trial": trial, "cumulative_trials": self.trials,
                "num_seeds": len(self.online), "candidate_index": cand.idx})
        self.ctx.metric("mipro.best_score", rollouts, float(self.incumbent.score or 0.0),
                        {"candidate_index": self.incumbent.idx})
        self.reporter.progress(force=True)

    def _next_full_eval(self) -> _Combo | None:
        pending = [c for c in self.combos.values() if c.candidate is None and c.minibatch]
        return max(pending, key=lambda c: (c.mean, -c.instruction, -c.demos)) if pending else None

    def run(self) -> str:
        """Runs until done or halted; returns the finish reason. Candidates are kept either way."""
        import optuna
        from optuna.distributions import CategoricalDistribution

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = optuna.samplers.TPESampler(
            seed=self.seed, multivariate=True, n_startup_trials=int(self.tpe.get("n_startup_trials", 5)),
            n_ei_candidates=int(self.tpe.get("n_candidates", 24)))
        study = optuna.create_study(direction="maximize", sampler=sampler)
        space = {"instruction": CategoricalDistribution(list(range(len(self.instructions)))),
                 "demos": CategoricalDistribution(list(range(len(self.demo_sets))))}
        try:
            self.full_eval(self._combo(0, 0), iteration=0, trial=0)
            for iteration in range(self.iterations):
                self.ctx.emit("mipro.iteration.start", f"iteration {iteration + 1}/{self.iterations}", {
                    "iteration": iteration, "num_iterations": self.iterations,
                    "num_trials_per_iteration": self.per_iteration, "batch_size": self.batch_size,
                    "max_rollouts": self.runner.budget.limit, "max_time_seconds": self.max_seconds})
                for t in range(self.per_iteration):
                    if self.max_seconds is not None and time.monotonic() - self.started >= self.max_seconds:
                        return "timeout"
                    self._trial(study, space, iteration, t)
                self.ctx.emit("mipro.iteration.complete", f"iteration {iteration + 1} done",
                              {"iteration": iteration, "cumulative": self.trials})
            final = self._next_full_eval()
            if final is not None:
                self.full_eval(final, iteration=self.iterations - 1, trial=self.per_iteration - 1)
            self.verdicts(None)
            self.ctx.emit("mipro.optimization.exhausted", "all trials run", {"trials": self.trials})
            return "completed"
        except SearchHalted as halted:
            self.verdicts(halted.reason)
            return halted.reason

    def _best_tried(self, instruction: int) -> _Combo | None:
        tried = [c for c in self.combos.values() if c.instruction == instruction and c.minibatch]
        return max(tried, key=lambda c: (c.mean, -c.demos)) if tried else None

    def verdicts(self, halted: str | None) -> None:
        """``prompt.learning.proposal.scored`` for each proposed instruction: kept (a pair of it became a
        candidate) or not, and why; ``halted``: the reason the search stopped early, if it did."""
        seed = self._best_tried(0)
        parent = seed.mean if seed else None
        stopped = f"; the search stopped early ({halted})" if halted else ""
        for i in range(1, len(self.instructions)):
            kept = [c for c in self.combos.values() if c.instruction == i and c.candidate is not None]
            chosen = max(kept, key=lambda c: (c.candidate.score if c.candidate else None) or 0.0) if kept else None
            decisive = chosen or self._best_tried(i)  # the pair that was kept, else its best tried one
            score = decisive.mean if decisive and decisive.minibatch else None
            if decisive is None:
                reason = f"no trial used it: the sampler chose other instructions in all {self.trials} trials{stopped}"
            else:
                n = len(decisive.minibatch)
                said = f"minibatch mean {decisive.mean:.3f} (demo set {decisive.demos}, {n} trial{'s' if n != 1 else ''})"
                lowest = f" (the pairs picked had {min(self.picked):.3f} or more when picked)" if self.picked else ""
                reason = (f"{said}: fully evaluated, kept as candidate {chosen.candidate.idx}"
                          if chosen and chosen.candidate else
                          f"{said} never led the untested pairs when a full evaluation came{lowest}{stopped}")
            index = chosen.candidate.idx if chosen and chosen.candidate else None
            self.ctx.emit("prompt.learning.proposal.scored",
                          f"proposal[{i}] train_accuracy={'—' if score is None else f'{score:.3f}'} "
                          f"{'accepted' if index is not None else 'rejected'}",
                          {"score": score, "accepted": index is not None, "proposal": i,
                           "candidate_index": index, "parent_id": 0,
                           "parent_score": parent, "reason": reason, "instruction_index": i})

    def _trial(self, study: Any, space: dict[str, Any], iteration: int, t: int) -> None:
        from optuna.trial import TrialState

        trial = study.ask(space)
        combo = self._combo(int(trial.params["instruction"]), int(trial.params["demos"]))
        seeds = self.rng.sample(self.online, self.batch_size)
        try:
            score, _ = self._score(combo, seeds, f"t{self.trials + 1}")
        except SearchHalted:
            study.tell(trial, state=TrialState.FAIL)
            raise
        study.tell(trial, score)
        combo.minibatch.append(score)
        self.trials += 1
        best = self.incumbent.score if self.incumbent else None
        self.ctx.emit("mipro.trial.complete", f"[Trial {self.trials}] minibatch score {score:.3f}", {
            "minibatch_score": score, "iteration": iteration, "trial": t, "num_seeds": len(seeds),
            "instruction_index": combo.instruction, "demo_index": combo.demos, "best_score": best})
        self.ctx.metric("mipro.trial.score", self._rollouts(), score,
                        {"n": len(seeds), "trial": self.trials, "instruction_index": combo.instruction,
                         "demo_index": combo.demos})
        if self.trials % self.full_eval_every == 0:
            pending = self._next_full_eval()
            if pending is not None:
                self.full_eval(pending, iteration=iteration, trial=t)
