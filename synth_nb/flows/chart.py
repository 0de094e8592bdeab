"""What a flow's chart plots, as plain data, and the buffers that collect its points from a job.

Each flow declares a ``ChartSpec`` (which metric names and events feed which series, and which reference
scores are drawn beside them); ``ChartData`` turns a job's metric points and events into (x, y) series and
reference values. Renderers (the notebook's PNG chart, the terminal chart, the prompt-learning summary
curve) draw a ``ChartData``, so every picture of a job reads the same definition.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ChartData", "ChartSpec", "EventSampler", "ReferenceSpec", "SeriesBuffer", "SeriesSpec",
           "ValueSampler", "number", "step_value"]

#: (event type, data, running trial count) -> (x, y) or None
EventSampler = Callable[[str, Mapping[str, Any], int], "tuple[int, float] | None"]
#: (event type, data) -> a reference value or None
#: (event type, event data) -> a reference score; the data also holds the event's ``message`` when it has none
ValueSampler = Callable[[str, Mapping[str, Any]], "float | None"]


@dataclass(frozen=True)
class SeriesSpec:
    key: str
    label: str
    metric_names: frozenset[str] = frozenset()
    style: Literal["line", "points", "step"] = "line"
    color: str | None = None
    higher_is_better: bool = False
    from_event: EventSampler | None = None
    #: key of another series this one is the running best of (prompt learning best-so-far)
    best_of: str | None = None
    #: event samples win over metric points (trial events number trials; metrics may count rollouts)
    prefer_events: bool = False


@dataclass(frozen=True)
class ReferenceSpec:
    """One score drawn beside the series: a baseline, or a score measured on other data after the run.

    ``during`` scores belong to the curve (the search-time baseline) and are drawn as a dashed line across
    it; ``after`` scores (held-out evaluations) are drawn as markers at the right edge, labelled, so a
    score measured on other data never reads as a point of the curve.
    """

    key: str
    label: str
    metric_names: frozenset[str] = frozenset()
    from_event: ValueSampler | None = None
    when: Literal["during", "after"] = "during"
    color: str = "0.4"
    marker: str = "D"
    #: the first value seen stays: a later report of the same score must not move the line
    keep_first: bool = False


@dataclass(frozen=True)
class ChartSpec:
    title: str
    #: what the x values count, in plain words
    xlabel: str
    ylabel: str
    series: tuple[SeriesSpec, ...]
    references: tuple[ReferenceSpec, ...] = ()
    #: the x label when every drawn point came from an event rather than a metric (e.g. "trial")
    event_xlabel: str | None = None
    #: one sentence saying what each series measures, where two could be read one for the other
    legend: str = ""

    def label_of(self, metric: str) -> str | None:
        """The label the chart gives a backend metric name (a series' or a reference score's), if it draws it."""
        for series in self.series:
            if metric in series.metric_names:
                return series.label
        return next((ref.label for ref in self.references if metric in ref.metric_names), None)

    def waiting_text(self) -> str:
        """What the chart waits for before its first point, in its own words."""
        names = " or ".join(s.label for s in self.series if s.best_of is None)
        return f"waiting for the first {names} point…" if names else "waiting for the first metric…"


def number(*values: Any) -> float | None:
    """The first value that is a real number (booleans are not), as a float."""
    for v in values:
        kind = type(v)
        if kind is float or kind is int:  # the common case, told without an isinstance check (a long job's data)
            return float(v)
        if isinstance(v, bool):
            continue
        if isinstance(v, int | float):
            return float(v)
    return None


def step_value(event_type: str, key: str) -> EventSampler:
    """A sampler of ``(data["step"], data[key])`` from events of ``event_type`` that report both: a training
    curve drawn from its step events, which arrive by the stream before the metrics page that repeats them."""
    def sample(etype: str, data: Mapping[str, Any], count: int) -> tuple[int, float] | None:
        if etype != event_type:
            return None
        step, value = number(data.get("step")), number(data.get(key))
        if step is None or value is None:
            return None
        return int(step), value

    return sample


def _field(item: Any, name: str) -> Any:
    """``item.name``, or ``item[name]`` for a plain dict (records read back from JSON)."""
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


class SeriesBuffer:
    """(x, y) points for one series, kept in step order, from metric points or from events."""

    def __init__(self, spec: SeriesSpec) -> None:
        self.spec = spec
        self.metric_x: list[int] = []
        self.metric_y: list[float] = []
        self.event_x: list[int] = []
        self.event_y: list[float] = []
        self._cache: tuple[np.ndarray, np.ndarray] | None = None
        self.source: SeriesBuffer | None = None  # set for best-so-far series

    def append_metric(self, step: int, value: float) -> None:
        _append(self.metric_x, self.metric_y, step, value)
        self._cache = None

    def extend_metrics(self, steps: list[int], values: list[float]) -> None:
        """``append_metric`` of each (step, value), in order: taken whole when the buffer is empty and the steps
        ascend (a metric log's column), else one at a time."""
        if not self.metric_x and all(map(operator.lt, steps, steps[1:])):
            self.metric_x, self.metric_y = list(steps), list(values)
            self._cache = None
            return
        for step, value in zip(steps, values, strict=True):
            self.append_metric(step, value)

    def append_event(self, step: int, value: float) -> None:
        _append(self.event_x, self.event_y, step, value)
        self._cache = None

    @property
    def uses_events(self) -> bool:
        """True when the points drawn are event samples (their x counts trials, not metric steps)."""
        if self.source is not None and not self.metric_x:
            return self.source.uses_events
        return bool(self.event_x) and (self.spec.prefer_events or not self.metric_x)

    def xy(self) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        if self.source is not None and not self.metric_x:
            x, y = self.source.xy()
            if len(y) == 0:
                return x, y
            return x, np.fmax.accumulate(y) if self.source.spec.higher_is_better else np.fmin.accumulate(y)
        if self._cache is None:
            xs, ys = (self.event_x, self.event_y) if self.uses_events else (self.metric_x, self.metric_y)
            self._cache = (np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))
        return self._cache


def _merged(columns: Callable[[str], tuple[Any, Any]], names: Iterable[str]) -> list[tuple[int, str, float]]:
    """(step, name, value) of every point of ``names``, in (step, name) order (a metric log's order)."""
    merged: list[tuple[int, str, float]] = []
    for name in names:
        steps, values = columns(name)
        merged += zip(steps.tolist(), [name] * len(steps), values.tolist(), strict=True)
    merged.sort(key=_STEP_NAME)
    return merged


_STEP_NAME = operator.itemgetter(0, 1)


def _append(xs: list[int], ys: list[float], step: int, value: float) -> None:
    """Append in step order; a repeated step replaces its value, a late (out-of-order) step is inserted."""
    if not xs or step > xs[-1]:
        xs.append(step)
        ys.append(value)
        return
    i = bisect.bisect_left(xs, step)
    if i < len(xs) and xs[i] == step:
        ys[i] = value
    else:
        xs.insert(i, step)
        ys.insert(i, value)


@dataclass
class ChartData:
    """The series and reference scores of one job's chart, fed with its metric points and events."""

    spec: ChartSpec
    series: dict[str, SeriesBuffer] = field(init=False)
    #: reference key -> its value, once reported
    references: dict[str, float] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.series = {s.key: SeriesBuffer(s) for s in self.spec.series}
        for buf in self.series.values():
            if buf.spec.best_of is not None:
                buf.source = self.series[buf.spec.best_of]

    def _set_reference(self, ref: ReferenceSpec, value: float) -> bool:
        if ref.keep_first and ref.key in self.references:
            return False
        self.references[ref.key] = value
        return True

    def add_metric(self, point: Any) -> bool:
        """Add a ``MetricPoint`` (or a dict with name/step/value). Returns True if it fed the chart."""
        name, step, value = _field(point, "name"), _field(point, "step"), _field(point, "value")
        if name is None or value is None:
            return False
        used = False
        for ref in self.spec.references:
            if name in ref.metric_names:
                used |= self._set_reference(ref, float(value))
        for buf in self.series.values():
            if name in buf.spec.metric_names:
                buf.append_metric(int(step or 0), float(value))
                used = True
        return used

    def add_event(self, event: Any) -> bool:
        """Add an ``Event`` (or its dict); returns True if it carried a reference score or a series sample."""
        return self._add_event(_field(event, "type") or "", _field(event, "data") or {}, _field(event, "message"))

    def _add_event(self, etype: str, data: Mapping[str, Any], message: Any) -> bool:
        used = False
        if self.spec.references:  # the data with the message, made only for a chart that reads references
            said = {**data, "message": message} if message and "message" not in data else data
            for ref in self.spec.references:
                value = ref.from_event(etype, said) if ref.from_event is not None else None
                if value is not None:
                    used |= self._set_reference(ref, value)
        for buf in self.series.values():
            if buf.spec.from_event is None or buf.source is not None:
                continue
            sample = buf.spec.from_event(etype, data, len(buf.event_x) + 1)
            if sample is not None:
                buf.append_event(*sample)
                used = True
        return used

    def extend(self, metrics: Iterable[Any] = (), events: Iterable[Any] = ()) -> bool:
        """Add many points and events; True if any of them fed the chart."""
        columns = getattr(metrics, "series", None)  # a job's metric log: each name's column, no point built
        if callable(columns):
            used = self._add_columns(columns)
        else:
            used = False
            for m in metrics:
                used |= self.add_metric(m)
        if any(ref.from_event is not None for ref in self.spec.references) or any(
                buf.spec.from_event is not None for buf in self.series.values()):  # else no event feeds it
            datas = getattr(events, "datas", None)  # a job's event log: each event's data, no event built
            if callable(datas):
                for item in datas():
                    used |= self._add_event(item.type, item.data, item.message)
            else:
                for e in events:
                    used |= self.add_event(e)
        return used

    def _add_columns(self, columns: Callable[[str], tuple[Any, Any]]) -> bool:
        """``add_metric`` of every point of a metric log, in its (step, name) order, read a name's column at a
        time (``MetricLog.series``: a long job's 500,000 points cost milliseconds, not a call each)."""
        used = False
        for ref in self.spec.references:
            for _step, _name, value in _merged(columns, ref.metric_names):
                used |= self._set_reference(ref, value)
        for buf in self.series.values():
            held = [column for column in map(columns, buf.spec.metric_names) if len(column[0])]
            if len(held) == 1:  # one of its names has points (a backend uses one name for a series)
                points = (held[0][0].tolist(), held[0][1].tolist())
            else:
                merged = _merged(columns, buf.spec.metric_names)
                points = ([step for step, _, _ in merged], [value for _, _, value in merged])
            if points[0]:
                buf.extend_metrics(*points)
                used = True
        return used

    @property
    def draws_events(self) -> bool:
        """Whether a series would draw samples of events: one that samples them and has no metric point (or
        prefers events). After the metric points, a reader of the series alone reads the events only then."""
        return any(b.spec.from_event is not None and b.source is None and (b.spec.prefer_events or not b.metric_x)
                   for b in self.series.values())

    @property
    def point_count(self) -> int:
        return sum(len(b.xy()[0]) for b in self.series.values())

    @property
    def empty(self) -> bool:
        """Nothing to draw yet: no series point and no reference score."""
        return not self.references and all(len(b.xy()[0]) == 0 for b in self.series.values())

    def xlabel(self) -> str:
        """The x axis in plain words: what the drawn points count (trials when they all came from events)."""
        drawn = [b for b in self.series.values() if len(b.xy()[0])]
        if self.spec.event_xlabel and drawn and all(b.uses_events for b in drawn):
            return self.spec.event_xlabel
        return self.spec.xlabel

    def reference_values(self) -> list[tuple[ReferenceSpec, float]]:
        """The reported reference scores, in the spec's order."""
        return [(ref, self.references[ref.key]) for ref in self.spec.references if ref.key in self.references]

    def latest_values(self) -> list[dict[str, Any]]:
        """One row per non-empty series: label, latest step and value, best value (the text alternative);
        then one row per reported reference score."""
        import numpy as np

        rows: list[dict[str, Any]] = []
        for buf in self.series.values():
            x, y = buf.xy()
            if len(x) == 0:
                continue
            best = float(np.nanmax(y) if buf.spec.higher_is_better else np.nanmin(y))
            rows.append({"series": buf.spec.label, "step": int(x[-1]), "latest": float(y[-1]), "best": best,
                         "points": int(len(x))})
        for ref, value in self.reference_values():
            rows.append({"series": ref.label, "step": None, "latest": value, "best": value, "points": 1})
        return rows
