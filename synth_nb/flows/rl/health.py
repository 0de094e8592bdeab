"""RL's run-health rules: a reward that rises for the wrong reasons.

Read from the chart's two series (mean training reward, eval reward) and from fields of the ``rl.train.step``
events that the embedded backend adds (``completion_tokens_mean``, ``groups``, ``zero_variance_groups``,
``group_seeds``, ``winning_completions``); a backend that does not send a field leaves its rule silent.

- the training reward rises while the eval reward falls at each of the last ``FALLING_EVALS`` evaluations, by
  ``FALL_SHARE`` of its value in all;
- the completions grow to ``LENGTH_FACTOR`` times their starting length while the reward rises;
- at least ``FLAT_SHARE`` of the groups had every reward equal (a zero advantage: nothing to learn from);
- one completion won at least ``COLLAPSE_SHARE`` of the groups of the last ``COLLAPSE_STEPS`` steps, on at
  least ``COLLAPSE_SEEDS`` different seeds (the policy answers everything the same way).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from synth_nb.flows.artifacts import FinishedJob
from synth_nb.flows.health import (
    HealthWarning,
    Points,
    as_tuple,
    chart_points,
    end_change,
    falling_tail,
    field_points,
    figure,
    rising,
    span_text,
    step_rows,
    steps_text,
)
from synth_nb.flows.rl.chart import CHART

__all__ = ["health"]

STEP_EVENT = "rl.train.step"
#: evaluations in a row, each lower than the one before, that make a falling eval reward
FALLING_EVALS = 3
#: and the least they fall by in all, as a share of the first of them (sampling noise falls by less)
FALL_SHARE = 0.05
#: completions this many times longer at the end than at the start
LENGTH_FACTOR = 2.0
#: and at least this many tokens longer (a 2-token reply growing to 4 is not a drift)
LENGTH_TOKENS = 4.0
#: the share of groups with no reward spread that leaves too little to learn from
FLAT_SHARE = 0.5
#: the fewest groups the share is judged on
FLAT_GROUPS = 8
#: the steps (the newest) whose groups' winners are compared
COLLAPSE_STEPS = 5
COLLAPSE_SHARE = 0.5
COLLAPSE_SEEDS = 8


#: the step events' data as the rules read them: (step, data), in the order they came
Rows = Sequence[tuple[int, Mapping[str, Any]]]


def health(job: FinishedJob) -> list[HealthWarning]:
    series = chart_points(job, CHART)
    train, steps = series["train"], step_rows(job, STEP_EVENT)
    found = [_eval_falls(train, series["eval"]), _length_drift(steps, train), _flat_groups(steps), _collapse(steps)]
    return [warning for warning in found if warning is not None]


def _eval_falls(train: Points, evals: Points) -> HealthWarning | None:
    tail = falling_tail(evals, FALLING_EVALS)
    if tail is None or tail.values[0] - tail.values[-1] < FALL_SHARE * abs(tail.values[0]):
        return None
    rose = rising(train.between(tail.steps[0], tail.steps[-1]))
    if rose is None:
        return None
    values = " → ".join(figure(v) for v in tail.values)
    return HealthWarning(
        "rl.eval_falls", "the eval reward falls while the training reward rises",
        f"{evals.name} {values} at {steps_text(tail.steps)} ({len(tail)} evaluations, each lower than the one "
        f"before) while {train.name} rose {figure(rose[0])} → {figure(rose[1])} over "
        f"{span_text(tail.steps[0], tail.steps[-1])}",
        (evals.name, train.name), tail.steps)


def _length_drift(rows: Rows, train: Points) -> HealthWarning | None:
    lengths = field_points(rows, f"{STEP_EVENT} completion_tokens_mean", "completion_tokens_mean")
    change = end_change(lengths)
    if change is None or len(lengths) < 4:
        return None
    start, end = change
    if end < LENGTH_FACTOR * start or end - start < LENGTH_TOKENS:
        return None
    rose = rising(train.between(lengths.steps[0], lengths.steps[-1]))
    if rose is None:
        return None
    return HealthWarning(
        "rl.length_drift", "completions grow while the reward rises (the reward may favour length)",
        f"mean completion length {figure(start)} → {figure(end)} tokens (×{end / start if start else 0:.1f}) over "
        f"{span_text(lengths.steps[0], lengths.steps[-1])} while {train.name} rose {figure(rose[0])} → "
        f"{figure(rose[1])}", (lengths.name, train.name), lengths.steps)


def _flat_groups(rows: Rows) -> HealthWarning | None:
    groups = flat = 0
    steps, mostly_flat = [], []
    for step, data in rows:
        n, zero = data.get("groups"), data.get("zero_variance_groups")
        if not isinstance(n, int) or not isinstance(zero, int) or not 0 <= zero <= n:
            continue
        groups, flat = groups + n, flat + zero
        steps.append(step)
        if n and zero * 2 > n:
            mostly_flat.append(step)
    if groups < FLAT_GROUPS or flat < FLAT_SHARE * groups:
        return None
    return HealthWarning(
        "rl.zero_variance", "many groups had no reward spread (no learning signal)",
        f"{flat} of {groups} groups ({flat / groups:.0%}) over {span_text(steps[0], steps[-1])} had every "
        f"reward equal, so their advantage was zero; more than half of the groups were flat at "
        f"{steps_text(mostly_flat) or 'no single step'}",
        (f"{STEP_EVENT} zero_variance_groups", f"{STEP_EVENT} groups"), tuple(mostly_flat))


def _collapse(rows: Rows) -> HealthWarning | None:
    told = [(step, data) for step, data in rows if "winning_completions" in data and "group_seeds" in data]
    wins: Counter[str] = Counter()
    seeds: dict[str, set[object]] = {}
    won_at: dict[str, list[int]] = {}
    groups = 0
    for step, data in told[-COLLAPSE_STEPS:]:
        winners, at = as_tuple(data["winning_completions"]), as_tuple(data["group_seeds"])
        for winner, seed in zip(winners, at, strict=False):
            if not isinstance(winner, str):
                continue
            groups += 1
            wins[winner] += 1
            seeds.setdefault(winner, set()).add(seed if isinstance(seed, int | str) else repr(seed))
            won_at.setdefault(winner, []).append(step)
    if not wins:
        return None
    top, count = wins.most_common(1)[0]
    if count < COLLAPSE_SHARE * groups or len(seeds[top]) < COLLAPSE_SEEDS:
        return None
    steps = tuple(sorted(set(won_at[top])))
    return HealthWarning(
        "rl.collapse", "the same completion wins across many seeds (the policy may have collapsed)",
        f"one completion (fingerprint {top[:12]}) was the best of {count} of {groups} groups at "
        f"{steps_text(steps)}, on {len(seeds[top])} different seeds",
        (f"{STEP_EVENT} winning_completions", f"{STEP_EVENT} group_seeds"), steps)
