"""Each run's curves, read with its flow's chart definition, on three progress axes.

* ``steps``: the flow's own progress step, as its monitor chart shows it (SFT/RL training step; prompt
  learning: search rollouts, or the trial number when the backend sends trial events only);
* ``rollouts``: rollouts done when the point was recorded, from events that report them (prompt
  learning's ``rollouts_completed``, an RL step's ``rollouts``); SFT has none;
* ``seconds``: wall time since the run's first event, from each point's ``created_at``.

The best so far is the backend's own best series when the chart has one (prompt learning), else the
running best of the series itself (lowest loss, highest reward).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from synth_nb.comparison.runs import Run
from synth_nb.flows import get_flow
from synth_nb.flows.chart import SeriesSpec
from synth_nb.job.progress import parse_time
from synth_nb.records import Event, MetricPoint

__all__ = ["AXES", "Axis", "Curve", "Samples", "curves_of", "rollout_total"]

Axis = Literal["steps", "rollouts", "seconds"]
AXES: dict[Axis, str] = {"steps": "progress step (the flow's own)", "rollouts": "rollouts",
                         "seconds": "wall time (s)"}


@dataclass
class Samples:
    """Points of one series: value and its position on each axis (None where that axis is unknown)."""

    steps: list[float] = field(default_factory=list)
    rollouts: list[float | None] = field(default_factory=list)
    seconds: list[float | None] = field(default_factory=list)
    values: list[float] = field(default_factory=list)

    def add(self, step: float, rollouts: float | None, seconds: float | None, value: float) -> None:
        self.steps.append(step)
        self.rollouts.append(rollouts)
        self.seconds.append(seconds)
        self.values.append(value)

    def on(self, axis: Axis) -> tuple[list[float], list[float]]:
        """(x, y) on ``axis``, in x order, without the points that have no position on it."""
        xs: Sequence[float | None] = self.steps if axis == "steps" else (
            self.rollouts if axis == "rollouts" else self.seconds)
        pairs = sorted((float(x), y) for x, y in zip(xs, self.values, strict=True) if x is not None)
        return [x for x, _ in pairs], [y for _, y in pairs]

    def __len__(self) -> int:
        return len(self.values)


@dataclass
class Curve:
    """One series of one run, and its best-so-far line."""

    run: Run
    panel: str
    label: str
    higher_is_better: bool
    raw: Samples
    best: Samples
    #: how the flow's chart draws the series: "points" for separate measurements (trial scores)
    style: str = "line"
    #: True when ``best`` is the backend's own best series (prompt learning's best validation score), which
    #: then is also the run's final result; else ``best`` is the running best of ``raw``
    reported_best: bool = False
    #: what ``final()`` measures, for tables ("train loss"; prompt learning: "score: best so far")
    headline: str = ""
    #: the flow's chart this series belongs to ("SFT loss"): one panel per chart in the comparison
    chart: str = ""
    #: True for the chart's first series (the flow's headline metric), False for the others (validation)
    primary: bool = True

    def final(self) -> float | None:
        """The value at the highest step (of the backend's best series when it reports one)."""
        samples = self.best if self.reported_best else self.raw
        if not samples.values:
            return None
        return max(zip(samples.steps, range(len(samples)), samples.values, strict=True))[2]

    def best_value(self) -> float | None:
        values = self.best.values or self.raw.values
        if not values:
            return None
        return max(values) if self.higher_is_better else min(values)


class _Clock:
    """Seconds since a run's first record, and rollouts done by then (interpolated between reports)."""

    def __init__(self, records: Iterable[Any]) -> None:
        times = [t for t in (parse_time(r.created_at) for r in records) if t is not None]
        self.start = min(times) if times else None
        self.marks: list[tuple[float, float]] = []

    def seconds(self, created_at: Any) -> float | None:
        t = parse_time(created_at)
        return None if t is None or self.start is None else t - self.start

    def read_rollouts(self, events: Sequence[Event]) -> None:
        total = 0.0
        for e in events:
            t = self.seconds(e.created_at)
            data = e.data or {}
            done, step = data.get("rollouts_completed"), data.get("rollouts")
            if t is None:
                continue
            if isinstance(done, int) and not isinstance(done, bool):
                total = float(done)
            elif isinstance(step, int) and not isinstance(step, bool) and e.type.endswith(".train.step"):
                total += step
            else:
                continue
            self.marks.append((t, total))

    def rollouts(self, seconds: float | None) -> float | None:
        if seconds is None or not self.marks:
            return None
        times = [t for t, _ in self.marks]
        i = bisect.bisect_left(times, seconds)
        if i >= len(self.marks):
            return self.marks[-1][1]
        t1, r1 = self.marks[i]
        if i == 0 or t1 == seconds:
            return r1 if t1 <= seconds else (r1 * seconds / t1 if t1 > 0 else r1)
        t0, r0 = self.marks[i - 1]
        return r0 + (r1 - r0) * (seconds - t0) / (t1 - t0)


def _metric_samples(metrics: Sequence[MetricPoint], spec: SeriesSpec, clock: _Clock) -> Samples:
    out = Samples()
    for p in metrics:
        if p.name in spec.metric_names:
            seconds = clock.seconds(p.created_at)
            out.add(float(p.step), clock.rollouts(seconds), seconds, float(p.value))
    return out


def _event_samples(events: Sequence[Event], spec: SeriesSpec, clock: _Clock) -> Samples:
    out = Samples()
    if spec.from_event is None:
        return out
    for e in events:
        sample = spec.from_event(e.type, e.data or {}, len(out) + 1)
        if sample is not None:
            seconds = clock.seconds(e.created_at)
            out.add(float(sample[0]), clock.rollouts(seconds), seconds, float(sample[1]))
    return out


def _running_best(raw: Samples, higher: bool) -> Samples:
    order = sorted(range(len(raw)), key=lambda i: (raw.steps[i], i))
    out, best = Samples(), None
    for i in order:
        v = raw.values[i]
        best = v if best is None else (max(best, v) if higher else min(best, v))
        out.add(raw.steps[i], raw.rollouts[i], raw.seconds[i], best)
    return out


def curves_of(run: Run) -> list[Curve]:
    """The run's curves, one per series of its flow's chart that has points (best-of series fold in)."""
    flow = get_flow(run.flow)
    events, metrics = list(run.events), list(run.metrics)  # each model built once, not once per series
    clock = _Clock([*events, *metrics])
    clock.read_rollouts(events)
    chosen: dict[str, Samples] = {}
    for spec in flow.chart.series:
        metric, event = _metric_samples(metrics, spec, clock), _event_samples(events, spec, clock)
        chosen[spec.key] = event if len(event) and (spec.prefer_events or not len(metric)) else metric
    curves: list[Curve] = []
    for spec in flow.chart.series:
        raw = chosen[spec.key]
        if spec.best_of is not None or not len(raw):
            continue
        best_spec = next((s for s in flow.chart.series if s.best_of == spec.key and len(chosen[s.key])), None)
        backend_best = chosen[best_spec.key] if best_spec is not None else None
        quantity = flow.chart.ylabel.split(" (")[0]
        curves.append(Curve(run, f"{flow.label}: {spec.label}", spec.label, spec.higher_is_better, raw,
                            backend_best or _running_best(raw, spec.higher_is_better), spec.style,
                            reported_best=backend_best is not None,
                            headline=f"{quantity}: {best_spec.label}" if best_spec is not None else spec.label,
                            chart=flow.chart.title, primary=not curves))
    return curves


def rollout_total(run: Run) -> int | None:
    """Rollouts the run reported in all (None when its events report none)."""
    events = list(run.events)
    clock = _Clock(events)
    clock.read_rollouts(events)
    return int(clock.marks[-1][1]) if clock.marks else None
