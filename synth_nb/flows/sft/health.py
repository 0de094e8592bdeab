"""SFT's run-health rules: a loss that says the model learns less than the curve suggests, or nothing.

Read from the chart's two series (train loss, validation loss), whichever metric spelling the backend uses:

- overfitting: the validation loss rose by at least ``OVERFIT_RISE`` of its lowest value over at least
  ``OVERFIT_EVALS`` evaluations after it, while the train loss kept falling; said from the step it was lowest;
- a flat loss: after at least ``FLAT_POINTS`` points, the train loss's end is not ``FLAT_FALL`` below its start.
"""

from __future__ import annotations

from synth_nb.flows.artifacts import FinishedJob
from synth_nb.flows.health import (
    HealthWarning,
    Points,
    chart_points,
    edge_points,
    end_change,
    figure,
    span_text,
)
from synth_nb.flows.sft.chart import CHART

__all__ = ["health"]

#: the validation loss's rise over its lowest value, as a share of it, that counts as rising
OVERFIT_RISE = 0.02
#: evaluations after the lowest one that all stay above it
OVERFIT_EVALS = 2
#: points the train loss needs before "not falling" is said
FLAT_POINTS = 8
#: the least share of its start the train loss must fall by
FLAT_FALL = 0.01


def health(job: FinishedJob) -> list[HealthWarning]:
    series = chart_points(job, CHART)
    found = [_overfitting(series["train"], series["validation"]), _flat(series["train"])]
    return [warning for warning in found if warning is not None]


def _overfitting(train: Points, validation: Points) -> HealthWarning | None:
    if len(validation) < OVERFIT_EVALS + 1:
        return None
    values = validation.values
    low = min(range(len(values)), key=values.__getitem__)
    after = validation.values[low + 1:]
    lowest, last = values[low], values[-1]
    if len(after) < OVERFIT_EVALS or last - lowest < OVERFIT_RISE * abs(lowest) or last <= lowest:
        return None
    since = validation.steps[low]
    fell = end_change(train.between(since, validation.steps[-1]))
    if fell is None or fell[1] >= fell[0]:
        return None
    return HealthWarning(
        "sft.overfitting", f"overfitting from step {since}: the validation loss rises while the train loss falls",
        f"{validation.name} {figure(lowest)} at step {since} (its lowest) → {figure(last)} at step "
        f"{validation.steps[-1]} over the {len(after)} evaluations after it, while {train.name} fell {figure(fell[0])} → "
        f"{figure(fell[1])}", (validation.name, train.name), validation.steps[low:])


def _flat(train: Points) -> HealthWarning | None:
    change = end_change(train)
    if change is None or len(train) < FLAT_POINTS:
        return None
    start, end = change
    if start - end >= FLAT_FALL * abs(start):
        return None
    return HealthWarning(
        "sft.flat_loss", "the loss is not falling (the model may not be learning)",
        f"{train.name} {figure(start)} at the start and {figure(end)} at the end over "
        f"{span_text(train.steps[0], train.steps[-1])} ({len(train)} points; each end is the mean of its "
        f"first or last {edge_points(len(train))})", (train.name,), (train.steps[0], train.steps[-1]))
