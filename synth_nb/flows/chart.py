"""What a flow's chart plots, as plain data, and the buffers that collect its points from a job.

Each flow declares a ``ChartSpec`` (which metric names and events feed which series); ``ChartData`` turns a
job's metric points and events into (x, y) series. Renderers (the notebook's PNG chart, the prompt-learning
summary curve) draw a ``ChartData``, so every picture of a job reads the same definition.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ChartData", "ChartSpec", "EventSampler", "SeriesBuffer", "SeriesSpec", "number"]

#: (event type, data, running trial count) -> (x, y) or None
EventSampler = Callable[[str, Mapping[str, Any], int], "tuple[int, float] | None"]


def _no_baseline(event_type: str, data: Mapping[str, Any]) -> float | None:
    return None


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
class ChartSpec:
    title: str
    xlabel: str
    ylabel: str
    series: tuple[SeriesSpec, ...]
    baseline_metrics: frozenset[str] = frozenset()
    #: fixed legend corner ("best" scans every vertex: slow on long series)
    legend_loc: Literal["upper right", "lower right"] = "upper right"
    baseline_from_event: Callable[[str, Mapping[str, Any]], float | None] = _no_baseline
    #: a baseline seen in an event of this type does not replace one already known (a post-search score
    #: must not replace the search-time one the best-so-far line is compared with)
    late_baseline_events: frozenset[str] = frozenset()


def number(*values: Any) -> float | None:
    """The first value that is a real number (booleans are not), as a float."""
    for v in values:
        if isinstance(v, bool):
            continue
        if isinstance(v, int | float):
            return float(v)
    return None


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

    def append_event(self, step: int, value: float) -> None:
        _append(self.event_x, self.event_y, step, value)
        self._cache = None

    def xy(self) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        if self.source is not None and not self.metric_x:
            x, y = self.source.xy()
            if len(y) == 0:
                return x, y
            return x, np.fmax.accumulate(y) if self.source.spec.higher_is_better else np.fmin.accumulate(y)
        if self._cache is None:
            use_events = bool(self.event_x) and (self.spec.prefer_events or not self.metric_x)
            xs, ys = (self.event_x, self.event_y) if use_events else (self.metric_x, self.metric_y)
            self._cache = (np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))
        return self._cache


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
    """The series of one job's chart, fed with its metric points and events."""

    spec: ChartSpec
    series: dict[str, SeriesBuffer] = field(init=False)
    baseline: float | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.series = {s.key: SeriesBuffer(s) for s in self.spec.series}
        for buf in self.series.values():
            if buf.spec.best_of is not None:
                buf.source = self.series[buf.spec.best_of]

    def add_metric(self, point: Any) -> bool:
        """Add a ``MetricPoint`` (or a dict with name/step/value). Returns True if it fed a series."""
        name, step, value = _field(point, "name"), _field(point, "step"), _field(point, "value")
        if name is None or value is None:
            return False
        if name in self.spec.baseline_metrics:
            self.baseline = float(value)
            return True
        used = False
        for buf in self.series.values():
            if name in buf.spec.metric_names:
                buf.append_metric(int(step or 0), float(value))
                used = True
        return used

    def add_event(self, event: Any) -> bool:
        """Add an ``Event`` (or its dict); returns True if it carried a baseline or a sample of some series."""
        etype = _field(event, "type") or ""
        data = _field(event, "data") or {}
        baseline = self.spec.baseline_from_event(etype, data)
        if baseline is not None and (self.baseline is None or etype not in self.spec.late_baseline_events):
            self.baseline = baseline
            return True
        used = False
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
        used = False
        for m in metrics:
            used |= self.add_metric(m)
        for e in events:
            used |= self.add_event(e)
        return used

    @property
    def point_count(self) -> int:
        return sum(len(b.xy()[0]) for b in self.series.values())

    def latest_values(self) -> list[dict[str, Any]]:
        """One row per non-empty series: label, latest step and value, best value (the text alternative)."""
        import numpy as np

        rows: list[dict[str, Any]] = []
        for buf in self.series.values():
            x, y = buf.xy()
            if len(x) == 0:
                continue
            best = float(np.nanmax(y) if buf.spec.higher_is_better else np.nanmin(y))
            rows.append({"series": buf.spec.label, "step": int(x[-1]), "latest": float(y[-1]), "best": best,
                         "points": int(len(x))})
        if self.baseline is not None:
            rows.append({"series": "baseline", "step": None, "latest": self.baseline, "best": self.baseline,
                         "points": 1})
        return rows
