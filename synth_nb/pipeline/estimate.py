"""An estimate of what a job will take, labelled as one: rollouts or tokens, wall time and cost.

The flow says what the job will do (``Flow.workload``: the search's and the held-out evaluation's rollouts
for prompt learning, steps x batch x group x turns plus evaluations for RL, tokens x epochs for SFT) and
what it cannot size before the run (``token_gaps``: the figure is then a floor, and the card names each
part). Tokens are what the job reports at the end: the policy's prompt and completion tokens of every
rollout (plus a proposer model's), or for SFT the training tokens the trainer counts. A prompt search's
prompts grow: one dry proposal of the job (``pipeline.dry_rollout``) shows by how much, and the flow's
schedule (``Workload.search``) how many rollouts run how deep; a small search the check ran once in full
(below) used what the job will use, and that is its figure. Wall time is an estimate timed by a dry run
on this machine now, made of what it says: a training job's (SFT, RL) from a dry training run of a few of
its real steps on the backend (start-up, step and evaluation seconds, times the job's steps and
evaluations; a start-up that took longer than its CPU seconds at the machine's load counts as those); a
prompt search's from its dry proposal (the pace of its rollouts, what a warm proposal takes and, for the
new instructions MIPRO writes, what a first batch of new text took, times the schedule; a batch too
short to time against the machine's bursts by its CPU seconds at the warm batches' wall per CPU second),
and a small search's (a few seconds at that pace: the bundled examples') from the whole search run once by
the check, for no job (the backend's ``dry_search``). Only a backend without those dry runs leaves a floor ("at least", naming what
is not timed: RL's training updates) or "unknown" (SFT). Cost comes from the model catalogue's price, and
only when it knows one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from synth_nb.flows import get_flow
from synth_nb.flows.base import Workload
from synth_nb.flows.catalogue import price_of
from synth_nb.pipeline.dry_rollout import DryProposal, DryRollout, DryTraining
from synth_nb.pipeline.target import Target

if TYPE_CHECKING:
    from synth_nb.plan import Plan

__all__ = ["PLAN_BASIS", "Estimate", "estimate", "plan_estimate", "wall_text"]

#: what an estimate made at submission is derived from, as every door says it ("estimate from the plan")
PLAN_BASIS = "the plan (no dry run at submission; --check adds the tokens and the time a dry run measures)"
#: why a figure the plan alone cannot give is missing, and what gives it
_NEEDS_DRY_RUN = "sized by a dry rollout, which --check runs (nothing is sent at submission)"


@dataclass(frozen=True)
class Estimate:
    """Figures derived from the config and dry runs; none of them is a measurement of the job."""

    workload: Workload
    tokens: int | None = None
    tokens_how: str = ""
    wall_seconds: float | None = None
    wall_how: str = ""
    cost: str = "unknown"
    #: what the figures are derived from, said in the heading
    basis: str = "the config"
    #: True when the token figure leaves out parts that cannot be sized before the run (a floor)
    tokens_floor: bool = False
    #: the parts the token figure leaves out, each named on the card
    gaps: tuple[str, ...] = ()
    #: True when the wall time leaves out parts it cannot time (a floor, said as "at least")
    wall_floor: bool = False

    @property
    def wall(self) -> str:
        """The wall time in words: never "0s"."""
        return wall_text(self.wall_seconds, floor=self.wall_floor)

    def lines(self) -> list[str]:
        w = self.workload
        out = [f"estimate (from {self.basis}, not a measurement):"]
        if w.rollouts is not None:
            out.append(f"  rollouts: {w.rollouts:,} = {w.formula}")
        elif w.formula and w.tokens is None:
            out.append(f"  rollouts: unknown ({w.formula})")
        tokens = "unknown" if self.tokens is None else (
            f"at least ~{self.tokens:,}" if self.tokens_floor else f"~{self.tokens:,}")
        out.append(f"  tokens: {tokens}" + (f" ({self.tokens_how})" if self.tokens_how else ""))
        out += [f"  not estimated: {gap}" for gap in self.gaps if self.tokens is not None]
        out.append(f"  wall time: {self.wall}" + (f" ({self.wall_how})" if self.wall_how else ""))
        out.append(f"  cost: {self.cost}")
        return out


def wall_text(seconds: float | None, *, floor: bool = False) -> str:
    """An estimated duration in words, never "0s": "< 1 min (about 0.4 s)", "< 1 min (about 12 s)", "about 3
    min", "about 2 h 05 min" (under ten seconds with a decimal, as the final block writes the actual time: a
    0.4 s estimate read "about 1 s" beside a 0.4 s run); a floor is "at least 0.4 s", "at least 12 s", "at
    least 3 min"."""
    if seconds is None or seconds != seconds or seconds < 0:
        return "unknown"
    minutes = round(seconds / 60)
    long = f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"
    if floor:
        short = f"{max(seconds, 0.1):.1f} s" if seconds < 10 else f"{round(seconds)} s"
        return f"at least {short if seconds < 60 else long}"
    if seconds >= 60:
        return f"about {long}"
    if seconds < 0.05:
        return "< 1 min (under 0.1 s)"
    return f"< 1 min (about {seconds:.1f} s)" if seconds < 9.95 else f"< 1 min (about {round(seconds)} s)"


def _search_tokens(w: Workload, proposal: DryProposal) -> tuple[int, str]:
    """Rollouts at the baseline prompt's tokens, plus the schedule's longer prompts and proposer calls."""
    assert w.search is not None and w.rollouts is not None
    mix = w.search.mix(proposal.improved, proposal.pool_score)
    base = w.rollouts * proposal.baseline_tokens
    grown = mix.proposal_rollouts * proposal.added_tokens
    demos = mix.demo_rollouts * (proposal.demo_chars or 0.0) * proposal.tokens_per_char
    proposer = mix.proposer_calls * proposal.proposer_tokens
    how = (f"{w.rollouts:,} rollouts x {proposal.baseline_tokens:,.0f} tokens at the baseline prompt + "
           f"{grown:,.0f} for longer prompts, one proposal adding {proposal.added_tokens:,.0f} tokens per rollout "
           f"in the dry proposal")
    if demos:
        how += f" + {demos:,.0f} for demos"
    if proposer:
        how += f" + {proposer:,.0f} for {mix.proposer_calls:.0f} proposer calls"
    return round(base + grown + demos + proposer), f"{how}; {mix.how}"


def _tokens(w: Workload, dry: DryRollout | None, target: Target) -> tuple[int | None, str, tuple[str, ...]]:
    """The token figure, how it was counted, and what it leaves out."""
    if target.is_embedded and w.embedded_tokens is not None:
        return w.embedded_tokens, w.embedded_tokens_how, ()
    if w.tokens is not None:
        return w.tokens, w.formula, w.token_gaps
    per_rollout = dry.tokens if dry is not None and dry.ok else None
    if w.rollouts is None or per_rollout is None or dry is None:
        return None, "needs a bounded rollout count and a dry rollout that reports token usage", w.token_gaps
    if w.search is not None and dry.proposal is not None:
        scheduled, how = _search_tokens(w, dry.proposal)
        if dry.proposal.rehearsal_tokens is None:
            return scheduled, how, ()
        return dry.proposal.rehearsal_tokens, (
            f"what {dry.proposal.rehearsed(w.rollouts)} used, counted as the job counts them (its policy route "
            f"and its proposer); from the schedule alone ~{scheduled:,}: {how}"), ()
    if w.reply_tokens is not None and dry.prompt_tokens is not None:
        per_rollout = dry.prompt_tokens + w.reply_tokens
        return w.rollouts * per_rollout, (f"{w.rollouts:,} rollouts x ({dry.prompt_tokens:,} prompt tokens in the "
                                          f"dry rollout + {w.reply_tokens:,} reply tokens, the reply cap: training "
                                          "changes how long replies are)"), w.token_gaps
    return w.rollouts * per_rollout, (f"{w.rollouts:,} rollouts x {per_rollout:,} prompt and completion tokens "
                                      "in the dry rollout"), w.token_gaps


def _trained(training: DryTraining) -> tuple[float, str]:
    """A training job's wall time at the pace of its dry training run: that run's span (start-up, the first
    and the last evaluation, saving, its own steps) plus the job's other steps and periodic evaluations."""
    more = training.job_steps - training.steps
    how = (f"estimate on this machine now, from a dry training run of {training.steps} real steps of the job: "
           f"{training.seconds:.1f} s for that run (start-up {training.load_seconds:.1f} s: worker started, "
           f"{training.model} loaded, data prepared; its first and last evaluation, saving, its steps) "
           f"{'+' if more >= 0 else '-'} {abs(more):,} steps x {training.step_seconds:.2f} s ({training.step_what})")
    if training.job_evaluations:
        how += (f" + {training.job_evaluations:,} evaluations x {training.evaluation_seconds:.2f} s "
                f"({training.evaluation_what})")
    if training.load_seconds - training.startup_seconds >= 0.1:  # said only where it changes the figure
        how += (f", with the start-up counted as {training.startup_seconds:.1f} s: its {training.load_cpu_seconds:.1f} s "
                f"of CPU at {training.contention:.1f}x (load {training.load_average:.1f} on {training.cores} cores), "
                "the rest a wait of the dry run's worker (for the disk, or the machine's other work)")
    if training.load_average is not None:
        how += f"; measured at load {training.load_average:.1f} on {training.cores} cores"
    return training.job_seconds, how + "; a busier machine takes longer"


def _searched(w: Workload, proposal: DryProposal) -> tuple[float, str, bool]:
    """A prompt search's wall time: what the whole search took when the check ran it once (a small one,
    ``DryProposal.rehearsed_seconds``); else its rollouts at the pace of the dry proposal's repeated rollouts
    (run through the job's own task-app runner, at its concurrency), its proposer's writing at what the dry
    run's warm second proposal took, and each prompt it scores for the first time at what that proposal's
    first batch took beyond the pace."""
    assert w.search is not None and w.rollouts is not None
    rehearsed = proposal.rehearsed_seconds
    if rehearsed is not None:
        spent = (f"in {proposal.rehearsal_seconds:.2f} s, {proposal.rehearsal_cpu_seconds:.2f} s of the backend's CPU"
                 if proposal.rehearsal_cpu_seconds is not None else f"in {proposal.rehearsal_seconds:.2f} s")
        if rehearsed != proposal.rehearsal_seconds:
            spent += (" (a run under a second is counted by its CPU seconds: its wall time is how the machine's "
                      "other work fell)")
        return rehearsed, (
            f"estimate on this machine now: {proposal.rehearsed(w.rollouts)} through the job's own search, "
            f"task-app runner and event store, {spent}; no job was created and "
            "nothing kept (the policy's embeddings of its new prompts were forgotten again, so the job makes them "
            "as this run did); a busier machine takes longer"), False
    mix = w.search.mix(proposal.improved, proposal.pool_score)
    seconds = (w.rollouts * proposal.pace + mix.proposer_calls * proposal.writing_seconds
               + mix.first_scored * proposal.new_prompt_seconds + mix.new_texts * proposal.new_text_seconds)
    which = "second (warm) dry proposal" if proposal.again_rollouts else "dry proposal"
    how = (f"estimate on this machine now: {w.rollouts:,} rollouts x {proposal.pace * 1000:,.2f} ms, the pace of the "
           f"dry proposal's {proposal.warm_rollouts} repeated rollouts ({w.search.concurrency} at a time) through the "
           f"job's task-app runner, + {mix.proposer_calls:.0f} proposals x {proposal.writing_seconds:.3f} s of "
           f"writing + {mix.first_scored:.0f} new prompts x {proposal.new_prompt_seconds:.3f} s for their first batch "
           f"beyond that pace, as the {which} took")
    if proposal.wall_per_cpu is not None:
        how += (f" (a first batch's CPU seconds beyond the pace's, at the warm batches' {proposal.wall_per_cpu:.2f} "
                "wall seconds per CPU second)")
    if mix.new_texts:
        how += (f" + {mix.new_texts:.1f} first batches of new text x {proposal.new_text_seconds:.3f} s, what the "
                f"first dry proposal's batch took beyond the pace ({mix.new_texts_how})")
    cold = proposal.first_proposal_seconds - proposal.proposal_seconds
    if proposal.again_rollouts and cold > 0.05 and not mix.new_texts:
        how += (f"; the first dry proposal took {cold:.2f} s more (a cold policy, which this check warmed for the "
                "job on the same backend)")
    if proposal.rehearsal_note:
        how += f"; the whole search was not run once: {proposal.rehearsal_note}"
    return seconds, how + "; a busier machine takes longer", False


def _wall(w: Workload, dry: DryRollout | None, target: Target) -> tuple[float | None, str, bool]:
    """The wall time, how it was made, and whether it is a floor. A training job's comes from its dry
    training run (an estimate); a prompt search's from its dry proposal (``_searched``); other jobs' rollouts
    in waves of ``concurrency``, each at least one dry rollout long (a floor)."""
    if dry is not None and dry.ok and dry.training is not None:
        return (*_trained(dry.training), False)
    if w.tokens is not None or w.embedded_tokens is not None:
        if dry is not None and dry.problem is not None and target.is_embedded:
            return None, dry.problem, False
        return None, "the backend offers no dry training step to time", False
    if dry is None or not dry.ok or dry.latency_ms is None:
        return None, "no dry rollout to time", False
    if w.rollouts is None:
        return None, "the rollout count is not bounded", False
    proposal = dry.proposal
    if w.search is not None and proposal is not None and proposal.warm_rollouts:
        return _searched(w, proposal)
    concurrency = max(1, w.concurrency or 1)
    waves = math.ceil(w.rollouts / concurrency)
    return waves * dry.latency_ms / 1000, (
        f"{w.rollouts:,} rollouts in {waves:,} waves of {concurrency}, each at least one dry rollout's "
        f"{dry.latency_ms:,.0f} ms on this machine now; not timed: the job's own work between them (training "
        "updates, a search's proposals), its start-up, and a busier machine"), True


def _cost(w: Workload, tokens: int | None, target: Target, floor: bool) -> str:
    if target.is_embedded:
        return "$0 (the embedded backend runs on this machine)"
    price = price_of(w.model)
    if price is None:
        return f"unknown (the model catalogue has no price for {w.model or 'this model'})"
    if tokens is None:
        return "unknown (the token count is unknown)"
    prompt, completion = price
    high = tokens * max(prompt, completion) / 1e6
    low = tokens * min(prompt, completion) / 1e6
    return (f"{'at least ' if floor else ''}${low:,.2f}-${high:,.2f} ({tokens:,} tokens at ${prompt:g}/"
            f"${completion:g} per million)")


def estimate(workload: Workload, dry: DryRollout | None, target: Target) -> Estimate:
    """Combine what the flow declares with the dry run's figures and the catalogue's prices."""
    tokens, tokens_how, gaps = _tokens(workload, dry, target)
    wall, wall_how, wall_floor = _wall(workload, dry, target)
    ran = dry is not None and dry.ok
    data = "the config and its data" if workload.tokens is not None else "the config"
    rehearsed = ran and dry is not None and dry.proposal is not None and dry.proposal.rehearsal_seconds is not None
    basis = ("the config, one dry rollout, one dry proposal and the whole search run once" if rehearsed else
             "the config, one dry rollout and one dry proposal" if ran and dry is not None and dry.proposal else
             f"{data} and a dry training run" if ran and dry is not None and dry.reward is None and dry.training
             else "the config, one dry rollout and a dry training run" if ran and dry is not None and dry.training
             else "the config and one dry rollout" if ran else data)
    floor = bool(gaps) and tokens is not None
    return Estimate(workload, tokens, tokens_how, wall, wall_how, _cost(workload, tokens, target, floor), basis,
                    tokens_floor=floor, gaps=gaps if tokens is not None else (), wall_floor=wall is not None and wall_floor)


def figures(made: Estimate, target: Target, basis: str) -> dict[str, Any]:
    """An estimate as the plain data a job is sent with (kept in its bundle, shown beside what it used when it
    ends: ``synth_nb.job.ending``), ``basis`` saying what it was made from."""
    work = made.workload
    price = None if target.is_embedded else price_of(work.model)
    cost_usd = 0.0 if target.is_embedded else (
        made.tokens * (price[0] + price[1]) / 2 / 1e6 if price is not None and made.tokens is not None else None)
    return {"basis": basis, "rollouts": work.rollouts,
            "rollouts_how": work.formula or "the config bounds no rollout count",
            "tokens": made.tokens, "tokens_floor": made.tokens_floor,
            "tokens_how": made.tokens_how if made.tokens is not None else _NEEDS_DRY_RUN,
            "wall_seconds": made.wall_seconds, "wall_floor": made.wall_floor,
            "wall_how": made.wall_how if made.wall_seconds is not None or work.tokens is not None else
            "timed by a dry run, which --check runs",
            "cost_usd": cost_usd, "cost": made.cost if cost_usd is not None else None, "cost_how": made.cost}


def plan_estimate(plan: Plan, target: Target) -> dict[str, Any]:
    """The estimate a job is sent with, from its plan alone: no dry rollout, nothing sent, only the config and
    its files read (``--check``'s card adds what a dry run measures)."""
    return figures(estimate(get_flow(plan.flow).workload(plan), None, target), target, PLAN_BASIS)
