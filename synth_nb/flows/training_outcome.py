"""What a finished training job (RL, SFT) reports it used and gained, for ``Flow.usage`` and ``Flow.gains``.

``TrainingFlow`` is the base of the flows whose jobs train weights: each names its ``TrainingEvents`` and
inherits the one reading of them, so RL and SFT cannot drift apart in how they count usage and gains.

A training flow names its own events (``TrainingEvents``): where the trained tokens are counted, which
events carry a step's rollouts and an evaluation's seeds, and which chart series is its headline measure
before and after; the reading is the same for both. ``steps`` of ``total_steps`` in the finishing event
says the job ran its planned steps (``max_steps``), read by ``reported_usage`` for any flow.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from synth_nb.flows.artifacts import FinishedJob
from synth_nb.flows.base import Flow
from synth_nb.flows.chart import ChartData, ChartSpec
from synth_nb.flows.outcome import Gain, Usage, count_of, events_data, reported_usage

__all__ = ["TrainingEvents", "TrainingFlow", "training_gains", "training_usage"]


@dataclass(frozen=True)
class TrainingEvents:
    """Where a training flow's events report what the job used and on what it was measured."""

    chart: ChartSpec
    #: the event whose ``tokens`` are the tokens trained on (SFT's finish, RL's completion)
    tokens_event: str
    #: events whose ``rollouts`` add up to the training rollouts (RL's steps); none for SFT
    step_event: str | None = None
    #: events whose ``seeds`` list the evaluation rollouts of one round (RL)
    eval_event: str | None = None
    #: (series key, measure, the data it is measured on, the event and key that count that data), headline first;
    #: the first is measured on held-out data (evaluation seeds, the validation split), the others on training data
    measures: tuple[tuple[str, str, str, str, str], ...] = ()


def training_usage(job: FinishedJob, spec: TrainingEvents) -> Usage:
    base = reported_usage(job)
    finished = events_data(job, spec.tokens_event)
    tokens = count_of(finished[-1].get("tokens")) if finished else None
    rollouts, how = base.rollouts, ""
    if spec.step_event is not None:
        trained = sum(count_of(n) or 0 for d in events_data(job, spec.step_event) if (n := d.get("rollouts")) is not None)
        rounds = events_data(job, spec.eval_event or "")
        evaluated = sum(len(d["seeds"]) for d in rounds if isinstance(d.get("seeds"), list))
        if trained or evaluated:
            rollouts, how = trained + evaluated, f"{trained:,} training + {evaluated:,} evaluation"
    return replace(base, rollouts=rollouts, rollouts_how=how,
                   tokens=tokens if tokens is not None else base.tokens,
                   tokens_how="trained on" if tokens is not None else base.tokens_how)


def training_gains(job: FinishedJob, spec: TrainingEvents) -> list[Gain]:
    """The first and last value of each measure that has two or more points, headline first."""
    chart = ChartData(spec.chart)
    chart.extend(job.metrics, ())
    out = []
    for i, (key, measure, data, etype, count_key) in enumerate(spec.measures):
        series = chart.series.get(key)
        if series is None:
            continue
        y = series.xy()[1]
        if len(y) < 2:
            continue
        counts = [count_of(d.get(count_key)) or (len(d[count_key]) if isinstance(d.get(count_key), list) else None)
                  for d in events_data(job, etype)]
        count = next((c for c in reversed(counts) if c), None)
        out.append(Gain(measure, float(y[0]), float(y[-1]), series.spec.higher_is_better,
                        f"{count} {data}" if count else data, held_out=i == 0))
    return out


class TrainingFlow(Flow):
    """A flow whose jobs train model weights on the backend (RL, SFT): what a finished job used and gained is
    read from the events its ``training_events`` names."""

    trains_weights = True
    #: where this flow's events report what a job used and on what it was measured
    training_events: ClassVar[TrainingEvents]

    def usage(self, job: FinishedJob) -> Usage:
        return training_usage(job, self.training_events)

    def gains(self, job: FinishedJob) -> list[Gain]:
        return training_gains(job, self.training_events)
