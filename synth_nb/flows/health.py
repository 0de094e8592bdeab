"""Run-health warnings: when a run's numbers look good but it is fooling itself, said with the evidence.

A flow's rules (``Flow.health``; each flow's own ``health`` module) read what the job streamed — its chart
series, the data of its events, its status document — and return a ``HealthWarning`` for each sign they
find: its code, one headline, the figures behind it, the series those figures come from and the steps they
were seen at. A rule that lacks the data it reads (a backend that does not stream it) says nothing: a
missing series is never a warning. The job layer (``synth_nb.job.health``) asks the flow and hands the
warnings to every door.

What lives here is what every flow's rules share: reading a series as (steps, values), the change of a
series between its start and its end, and the words for a run of steps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from synth_nb.flows.artifacts import FinishedJob
from synth_nb.flows.chart import ChartData, ChartSpec, number
from synth_nb.flows.outcome import events_data

__all__ = ["HealthWarning", "Points", "as_tuple", "chart_points", "edge_points", "end_change", "falling_tail",
           "field_points", "figure", "rising", "span_text", "step_rows", "steps_text"]

#: how many points of a series' start (or end) are averaged when its start and end are compared
EDGE_POINTS = 5
#: integers a float holds exactly: a step within them is the same read directly or through ``number``
_EXACT = 2**53
#: at most this many steps are listed in a warning's words (its ``steps`` keep them all)
LISTED_STEPS = 6


@dataclass(frozen=True)
class HealthWarning:
    """One sign that the run is not learning what its headline number says."""

    #: stable key a test or a tool can match (``rl.eval_falls``)
    code: str
    #: one short sentence ("eval reward falls while the training reward rises")
    headline: str
    #: the figures behind it, in words, with the steps they were seen at
    evidence: str
    #: the series (or event fields) the figures come from, as the chart and the events name them
    series: tuple[str, ...] = ()
    #: the steps (trials, for a prompt search) the evidence was seen at
    steps: tuple[int, ...] = ()

    def line(self) -> str:
        """``headline: evidence (from: series)``, the one line every door shows."""
        source = f" (from: {', '.join(self.series)})" if self.series else ""
        return f"{self.headline}: {self.evidence}{source}"

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "headline": self.headline, "evidence": self.evidence,
                "series": list(self.series), "steps": list(self.steps)}


@dataclass(frozen=True)
class Points:
    """One series as the job streamed it: its name, and its values in step order."""

    name: str
    steps: tuple[int, ...] = ()
    values: tuple[float, ...] = ()
    #: what the steps count, in the chart's words ("training step", "trial", "rollouts used")
    axis: str = "step"

    def __len__(self) -> int:
        return len(self.values)

    def between(self, first: int, last: int) -> Points:
        """The points at steps ``first`` to ``last`` (both included)."""
        kept = [(s, v) for s, v in zip(self.steps, self.values, strict=True) if first <= s <= last]
        return Points(self.name, tuple(s for s, _ in kept), tuple(v for _, v in kept), self.axis)


def chart_points(job: FinishedJob, spec: ChartSpec) -> dict[str, Points]:
    """Each series of the flow's chart (``spec``) as the job's metrics and events draw it, by series key, named
    by its label; the chart's reference scores (a baseline) are not series and are not included.

    A followed job's metric log gives each metric name's column at once (no point is built, so a 10,000-step
    job's series cost milliseconds); its events are read only for a series that draws them."""
    chart = ChartData(spec)
    chart.extend(job.metrics, ())
    if chart.draws_events:
        chart.extend((), job.events)
    out = {}
    axis = chart.xlabel()
    for key, buffer in chart.series.items():
        x, y = buffer.xy()
        out[key] = Points(buffer.spec.label, tuple(int(s) for s in x.tolist()), tuple(float(v) for v in y.tolist()),
                          axis)
    return out


def step_rows(job: FinishedJob, event_type: str) -> list[tuple[int, Mapping[str, Any]]]:
    """(step, data) of the job's ``event_type`` events that say their step, in the order they came: read once
    and handed to every rule that looks at them (a long job holds many)."""
    rows = []
    for data in events_data(job, event_type):
        step = data.get("step")
        if type(step) is not int or not -_EXACT < step < _EXACT:  # else read as ``number`` reads it
            step = number(step)
            if step is None:
                continue
            step = int(step)
        rows.append((step, data))
    return rows


def field_points(rows: Sequence[tuple[int, Mapping[str, Any]]], name: str, key: str) -> Points:
    """``data[key]`` by step of ``rows`` (``step_rows``) that report it, in step order (a repeated step keeps
    its last value), named ``name``."""
    by_step: dict[int, float] = {}
    for step, data in rows:
        value = data.get(key)
        if value is not None and (value := number(value)) is not None:
            by_step[step] = value
    steps = tuple(sorted(by_step))
    return Points(name, steps, tuple(by_step[s] for s in steps))


def end_change(points: Points) -> tuple[float, float] | None:
    """(start, end): the mean of the series' first and of its last few points (a quarter of them, at most
    ``EDGE_POINTS``), so one noisy point neither makes nor hides a trend; None under two points."""
    if len(points) < 2:
        return None
    k = edge_points(len(points))
    return sum(points.values[:k]) / k, sum(points.values[-k:]) / k


def figure(value: float) -> str:
    """A measured value as the doors print it (four significant figures)."""
    return f"{value:.4g}"


def steps_text(steps: Iterable[int], word: str = "step") -> str:
    """``step 40``, ``steps 20, 30, 40``, ``steps 1–60`` (a whole run of consecutive steps), or the first and
    last few of a long list (``steps 3, 7, 9, …, 51, 58``)."""
    listed = sorted(set(steps))
    if not listed:
        return ""
    if len(listed) == 1:
        return f"{word} {listed[0]}"
    if len(listed) > 2 and listed[-1] - listed[0] == len(listed) - 1:
        return f"{word}s {listed[0]}–{listed[-1]}"
    if len(listed) > LISTED_STEPS:
        half = LISTED_STEPS // 2
        return f"{word}s {', '.join(map(str, listed[:half]))}, …, {', '.join(map(str, listed[-half:]))}"
    return f"{word}s {', '.join(map(str, listed))}"


def span_text(first: int, last: int, word: str = "step") -> str:
    """``steps 10–30`` (``step 10`` when both are the same): the stretch a figure was read over."""
    return f"{word} {first}" if first == last else f"{word}s {first}–{last}"


def edge_points(count: int) -> int:
    """How many points of a series of ``count`` make its start (or its end): a quarter, 1 to ``EDGE_POINTS``."""
    return max(1, min(EDGE_POINTS, count // 4))


def rising(points: Points, at_least: float = 0.0) -> tuple[float, float] | None:
    """(start, end) when the series rose from its start to its end by more than ``at_least``, else None."""
    change = end_change(points)
    return change if change is not None and change[1] - change[0] > at_least else None


def falling_tail(points: Points, at_least: int) -> Points | None:
    """The series' last points that each fall below the one before, when there are ``at_least`` of them."""
    start = len(points) - 1
    while start > 0 and points.values[start - 1] > points.values[start]:
        start -= 1
    if len(points) - start < at_least:
        return None
    return Points(points.name, points.steps[start:], points.values[start:], points.axis)


def as_tuple(values: Sequence[Any] | Any) -> tuple[Any, ...]:
    """A list a backend sent, as a tuple (anything else: empty)."""
    return tuple(values) if isinstance(values, list | tuple) else ()
