"""GEPA's and MIPRO's schedules as the embedded backend runs them, weighted by how long their prompts are.

Both searches score prompts that proposals lengthen (``synth_nb.local.executors.prompt_learning``), so
their tokens are not rollouts x the baseline prompt. These schedules say, in expectation, how many
proposals deep the prompt of every rollout is, how many demos it carries and how many proposer calls the
search makes; the estimate multiplies that by what one dry proposal of the job showed (``flows.search_mix``).

GEPA: the baseline is scored on the validation seeds; each iteration scores a parent on a minibatch and,
unless the parent solved it whole (counted at the baseline's score), a proposal on it too, and an accepted
proposal (one that scores better on it) on the validation seeds, until ``rollout.budget``. A parent is counted as any candidate found so far, each as likely (Pareto selection
spreads its picks), so a new candidate is one proposal deeper than the candidates' mean. The baseline and
the top candidates (counted as deep as the newest) are scored on the held-out pool.

MIPRO: bootstrap (and reference) rollouts and the baseline's full evaluation use the baseline prompt; the
instructions are the baseline's and ``max_instructions - 1`` proposals, each written from half of the
grounding rollouts; demo sets are the empty one and sets of 1 to ``max_demo_set_size`` demos. Trials are
counted as spread evenly over instructions and demo sets (TPE's picks), the full evaluations and the
held-out top candidates as carrying a proposed instruction; the cap on search rollouts cuts the schedule.
"""

from __future__ import annotations

from dataclasses import dataclass

from synth_nb.flows.search_mix import SearchMix

__all__ = ["GepaSchedule", "MiproSchedule"]


def _acceptance(accepted: bool) -> float:
    """Share of proposals accepted: all when the dry one scored better than the baseline, else about half."""
    return 1.0 if accepted else 0.5


@dataclass(frozen=True)
class GepaSchedule:
    budget: int
    validation: int
    minibatch: int
    held_out: int
    top_k: int
    max_proposals: int | None
    seeds: tuple[int, ...]
    concurrency: int

    @property
    def demos(self) -> int:
        return 0

    def mix(self, accepted: bool, solved: float | None = None) -> SearchMix:
        share, m, v = _acceptance(accepted), self.minibatch, self.validation
        # GEPA skips a minibatch its parent solves whole: only the parent's rollouts are spent on it
        proposing = 1.0 - (solved or 0.0) ** m
        used, nodes, depth_sum, deep, calls, newest = float(v), 1.0, 0.0, 0.0, 0.0, 0.0
        while used + 2 * m <= self.budget and (self.max_proposals is None or calls < self.max_proposals):
            parent = depth_sum / nodes
            deep += m * parent + proposing * m * (parent + 1)
            used += m + proposing * m
            calls += proposing
            if used + v > self.budget:
                break
            deep += proposing * share * v * (parent + 1)
            used += proposing * share * v
            nodes += proposing * share
            depth_sum += proposing * share * (parent + 1)
            newest = parent + 1
        top = min(self.top_k, nodes - 1)
        deep += self.held_out * top * newest
        skipped = f" (minibatches the baseline solves whole, {1 - proposing:.0%}, propose nothing)" if solved else ""
        how = (f"GEPA's schedule: {calls:.0f} proposals of minibatch {m}{skipped}, "
               f"{'each' if accepted else 'about half'} accepted (as the dry one was{'' if accepted else ' not'}) "
               f"and scored on {v} validation seeds; a parent is any candidate so far, so the newest prompt is "
               f"{newest:.1f} proposals deep")
        return SearchMix(proposal_rollouts=deep, demo_rollouts=0.0, proposer_calls=calls, how=how)


@dataclass(frozen=True)
class MiproSchedule:
    grounding: int
    online: int
    batch: int
    trials: int
    full_every: int
    instructions: int
    demo_sets: int
    demo_size: int
    include_empty: bool
    top_k: int
    held_out: int
    cap: int | None
    seeds: tuple[int, ...]
    concurrency: int
    #: the rollouts the job's instructions are written from (reference_pool, else bootstrap_train_seeds)
    grounding_pool: int = 0

    @property
    def minibatch(self) -> int:
        return len(self.seeds)

    @property
    def demos(self) -> int:
        """Demos of a demo set, on average (the empty set counted when it is one)."""
        filled = (self.demo_sets - 1) / self.demo_sets if self.include_empty else 1.0
        return round(filled * (1 + self.demo_size) / 2)

    def mix(self, accepted: bool, solved: float | None = None) -> SearchMix:
        best = _acceptance(accepted)
        proposed = (self.instructions - 1) / self.instructions
        filled = (self.demo_sets - 1) / self.demo_sets if self.include_empty else 1.0
        demos = filled * (1 + self.demo_size) / 2
        cap = self.cap if self.cap is not None else float("inf")
        used, deep, shown, full = self.grounding + self.online, 0.0, 0.0, 0
        trials = 0
        for trial in range(1, self.trials + 1):
            if used + self.batch > cap:
                break
            used += self.batch
            deep, shown, trials = deep + self.batch * proposed, shown + self.batch * demos, trial
            if trial % self.full_every == 0 and used + self.online <= cap:
                used += self.online
                deep, shown, full = deep + self.online * best, shown + self.online * demos, full + 1
        if trials == self.trials and used + self.online <= cap:  # the best pair not yet fully evaluated
            deep, shown, full = deep + self.online * best, shown + self.online * demos, full + 1
        top = min(self.top_k, full)
        deep, shown = deep + self.held_out * top * best, shown + self.held_out * top * demos
        how = (f"MIPRO's schedule: {self.instructions - 1} proposed instructions, {trials} trials of {self.batch} "
               f"spread evenly over instructions and {self.demo_sets} demo sets (~{demos:.1f} demos each), "
               f"{full} full evaluations and the held-out top with a proposed instruction")
        # each trial's pair of an instruction and a demo set is new until every pair has been tried
        pairs = min(trials, self.instructions * self.demo_sets)
        return SearchMix(proposal_rollouts=deep, demo_rollouts=shown, proposer_calls=self.instructions - 1, how=how,
                         new_prompts=pairs, new_texts=(self.instructions - 1) * self.unseen_share,
                         new_texts_how=(f"{self.instructions - 1} new instructions, each written from a random half of "
                                        f"the {self.grounding_pool or 2 * self.minibatch} grounding rollouts, the dry "
                                        f"proposal from {self.minibatch} of them: {self.unseen_share:.0%} of each "
                                        "one's text new to the policy"))

    @property
    def unseen_share(self) -> float:
        """The share of a new instruction's text the dry proposal did not write: each of the job's instructions
        is written from a random half of the grounding rollouts, the dry proposal from ``minibatch`` of them."""
        pool = self.grounding_pool or 2 * self.minibatch
        return max(0.0, 1.0 - self.minibatch / pool) if pool else 0.0
