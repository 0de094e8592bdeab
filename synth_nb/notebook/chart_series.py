"""What each flow's chart plots: series definitions and the growable buffers that hold their points.

Kept apart from the renderer so the mapping "metric name / event type -> series" reads in one place.
Metric names cover the spellings the hosted backend and the local executors use; prompt-learning trial
scores may also arrive only as events (``prompt.learning.trial.results``, ``mipro.trial.complete``).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

__all__ = ["ChartSpec", "SeriesBuffer", "SeriesSpec", "spec_for_flow"]

#: (event type, data, running trial count) -> (x, y) or None
EventSampler = Callable[[str, Mapping[str, Any], int], "tuple[int, float] | None"]


@dataclass(frozen=True)
class SeriesSpec:
    key: str
    label: str
    metric_names: frozenset[str] = frozenset()
    style: str = "line"  # line | points | step
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
    baseline_from_event: Callable[[str, Mapping[str, Any]], float | None] = field(
        default=lambda etype, data: None)


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


def _num(*values: Any) -> float | None:
    for v in values:
        if isinstance(v, bool):
            continue
        if isinstance(v, int | float):
            return float(v)
    return None


def _trial_sample(etype: str, data: Mapping[str, Any], count: int) -> tuple[int, float] | None:
    if etype == "prompt.learning.trial.results":
        score = _num(data.get("mean"), data.get("score"))
    elif etype in ("mipro.trial.complete", "prompt.learning.trial.complete"):
        score = _num(data.get("minibatch_score"), data.get("score"))
    else:
        return None
    if score is None:
        return None
    trial = _num(data.get("trial_num"), data.get("cumulative_trials"))
    if trial is None and etype != "mipro.trial.complete":  # MIPRO's ``trial`` restarts every iteration
        trial = _num(data.get("trial")) or None  # a trial value of 0 is treated as missing (0.2.24)
    return (int(trial) if trial else count, score)


def _pl_baseline(etype: str, data: Mapping[str, Any]) -> float | None:
    if etype == "prompt.learning.validation.summary":
        base = data.get("baseline")
        return _num(base) if not isinstance(base, Mapping) else _num(base.get("accuracy"), base.get("score"))
    if etype == "mipro.baseline.test":
        return _num(data.get("test_score"), data.get("score"))
    if etype in ("prompt.learning.validation.scored", "prompt.learning.candidate.evaluated") and data.get("is_baseline"):
        return _num(data.get("accuracy"), data.get("score"))
    if etype.endswith(".baseline"):
        return _num(data.get("baseline_score"), data.get("score"), data.get("accuracy"))
    return None


SFT = ChartSpec(
    title="SFT loss",
    xlabel="training step",
    ylabel="loss (cross-entropy, nats/token)",
    series=(
        SeriesSpec("train", "train loss", frozenset({"train.loss", "sft.train.loss", "training_loss", "loss"}),
                   color="#1f77b4"),
        SeriesSpec("validation", "validation loss",
                   frozenset({"val.loss", "validation.loss", "eval.loss", "valid.loss", "sft.val.loss"}),
                   color="#d62728"),
    ),
)

RL = ChartSpec(
    title="RL reward",
    xlabel="training step",
    ylabel="mean reward per episode",
    series=(
        SeriesSpec("train", "mean reward",
                   frozenset({"train.reward_mean", "rl.reward_mean", "reward.mean", "reward_mean", "mean_reward",
                              "train.reward", "rollout.reward_mean", "train.mean_reward"}),
                   color="#2ca02c", higher_is_better=True),
        SeriesSpec("eval", "eval reward",
                   frozenset({"eval.reward_mean", "eval.reward", "eval.mean_reward", "rl.eval.reward_mean"}),
                   color="#9467bd", higher_is_better=True),
    ),
    legend_loc="lower right",
)

PROMPT_LEARNING = ChartSpec(
    title="Prompt learning score",
    xlabel="search progress (rollouts used; trial number without rollout counts)",
    ylabel="score (accuracy, 0–1)",
    series=(
        SeriesSpec("trial", "trial (minibatch) score",
                   frozenset({"gepa.trial.score", "prompt_learning.trial.score", "trial.score",
                              "mipro.trial.score", "mipro.minibatch_score", "mipro.trial.minibatch_score",
                              "prompt.learning.trial.score"}),
                   style="points", color="#1f77b4", higher_is_better=True, from_event=_trial_sample),
        # the backend's own best (validation) score when it reports one; else the running best trial
        SeriesSpec("best", "best so far",
                   frozenset({"gepa.best_score", "mipro.best_score", "prompt_learning.best_score"}),
                   style="step", color="#ff7f0e", higher_is_better=True, best_of="trial"),
    ),
    baseline_metrics=frozenset({"baseline.score", "prompt_learning.baseline", "gepa.baseline", "mipro.baseline",
                                "prompt.learning.baseline"}),
    baseline_from_event=_pl_baseline,
    legend_loc="lower right",
)

_SPECS = {"sft": SFT, "rl": RL, "prompt_learning": PROMPT_LEARNING}


def spec_for_flow(flow: str) -> ChartSpec:
    """The chart definition for ``flow`` (``sft``, ``rl`` or ``prompt_learning``)."""
    try:
        return _SPECS[flow]
    except KeyError:
        raise ValueError(f"no chart for flow {flow!r}; expected one of {sorted(_SPECS)}") from None
