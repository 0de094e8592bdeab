"""The prompt-learning chart: trial scores, the best so far and the baseline (GEPA and MIPRO).

Metric names cover the spellings the hosted backend and the local executors use; trial scores may also
arrive only as events (``prompt.learning.trial.results``, ``mipro.trial.complete``). The summary's curve
is drawn from this same definition.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synth_nb.flows.chart import ChartSpec, SeriesSpec, number

__all__ = ["CHART", "baseline_sample", "trial_sample"]


def trial_sample(etype: str, data: Mapping[str, Any], count: int) -> tuple[int, float] | None:
    """(trial number, score) of a trial event; ``count`` numbers trials that do not say theirs."""
    if etype == "prompt.learning.trial.results":
        score = number(data.get("mean"), data.get("score"))
    elif etype in ("mipro.trial.complete", "prompt.learning.trial.complete"):
        score = number(data.get("minibatch_score"), data.get("score"))
    else:
        return None
    if score is None:
        return None
    trial = number(data.get("trial_num"), data.get("cumulative_trials"))
    if trial is None and etype != "mipro.trial.complete":  # MIPRO's ``trial`` restarts every iteration
        trial = number(data.get("trial")) or None  # a trial value of 0 is treated as missing (0.2.24)
    return (int(trial) if trial else count, score)


def baseline_sample(etype: str, data: Mapping[str, Any]) -> float | None:
    """The baseline prompt's score, if this event reports one."""
    if etype == "prompt.learning.validation.summary":
        base = data.get("baseline")
        return number(base) if not isinstance(base, Mapping) else number(base.get("accuracy"), base.get("score"))
    if etype == "mipro.baseline.test":
        return number(data.get("test_score"), data.get("score"))
    if etype in ("prompt.learning.validation.scored", "prompt.learning.candidate.evaluated") and data.get("is_baseline"):
        return number(data.get("accuracy"), data.get("score"))
    if etype.endswith(".baseline"):
        return number(data.get("baseline_score"), data.get("score"), data.get("accuracy"))
    return None


CHART = ChartSpec(
    title="Prompt learning score",
    xlabel="search progress (rollouts used; trial number without rollout counts)",
    ylabel="score (accuracy, 0–1)",
    series=(
        SeriesSpec("trial", "trial (minibatch) score",
                   frozenset({"gepa.trial.score", "prompt_learning.trial.score", "trial.score",
                              "mipro.trial.score", "mipro.minibatch_score", "mipro.trial.minibatch_score",
                              "prompt.learning.trial.score"}),
                   style="points", color="#1f77b4", higher_is_better=True, from_event=trial_sample),
        # the backend's own best (validation) score when it reports one; else the running best trial
        SeriesSpec("best", "best so far",
                   frozenset({"gepa.best_score", "mipro.best_score", "prompt_learning.best_score"}),
                   style="step", color="#ff7f0e", higher_is_better=True, best_of="trial"),
    ),
    baseline_metrics=frozenset({"baseline.score", "prompt_learning.baseline", "gepa.baseline", "mipro.baseline",
                                "prompt.learning.baseline"}),
    baseline_from_event=baseline_sample,
    # the baseline scored during the search beats the post-search held-out one, so the baseline line
    # compares like with like against the best-so-far line
    late_baseline_events=frozenset({"prompt.learning.validation.summary"}),
    legend_loc="lower right",
)
