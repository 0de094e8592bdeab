"""The prompt-learning chart: trial scores, the best so far, and the baseline and best prompt's scores.

Two kinds of score appear in a job. During the search every prompt is scored on the search's own seeds:
the trial points, the best-so-far line and the search-time baseline (a dashed line) are all on that
scale, so best-so-far never drops below the baseline it started from. After the search the baseline and
the best prompt are scored once more on held-out seeds; those two are drawn as labelled markers at the
right edge, never as a replacement for the search baseline, so the chart keeps its meaning at the end.

Metric names cover the spellings the hosted backend and the local executors use; trial scores may also
arrive only as events (``prompt.learning.trial.results``, ``mipro.trial.complete``). The summary's curve
is drawn from this same definition.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synth_nb.flows.chart import ChartSpec, ReferenceSpec, SeriesSpec, number
from synth_nb.flows.prompt_learning.scores import baseline_in, score_value

__all__ = ["CHART", "heldout_baseline", "heldout_best", "search_baseline", "trial_sample"]

BEST_COLOR = "#ff7f0e"


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


def search_baseline(etype: str, data: Mapping[str, Any]) -> float | None:
    """The starting prompt's score on the search's seeds, if this event reports it."""
    if etype == "prompt.learning.candidate.evaluated" and data.get("is_baseline"):
        return number(data.get("score"), data.get("accuracy"))
    if etype == "mipro.fulleval.complete" and data.get("candidate_index") == 0:
        return number(data.get("score"))
    if etype.endswith(".baseline"):
        return number(data.get("baseline_score"), data.get("score"), data.get("accuracy"))
    return None


def heldout_baseline(etype: str, data: Mapping[str, Any]) -> float | None:
    """The starting prompt's score on the held-out seeds (measured after the search)."""
    if etype == "prompt.learning.validation.summary":
        base = data.get("baseline")
        return number(base) if not isinstance(base, Mapping) else score_value(base)
    if etype == "prompt.learning.validation.scored":  # flagged, or named only in the message (hosted)
        return baseline_in(etype, data, str(data.get("message") or ""))
    if etype == "mipro.baseline.test":
        return number(data.get("test_score"), data.get("score"))
    return None


def heldout_best(etype: str, data: Mapping[str, Any]) -> float | None:
    """The chosen (best) prompt's score on the held-out seeds."""
    if etype == "prompt.learning.validation.summary":
        results = data.get("results")
        first = results[0] if isinstance(results, list) and results else None
        return score_value(first) if isinstance(first, Mapping) else None
    if (etype == "prompt.learning.validation.scored" and data.get("rank") == 0
            and baseline_in(etype, data, str(data.get("message") or "")) is None):
        return score_value(data)
    if etype == "mipro.topk.evaluated" and data.get("rank") == 1:
        return number(data.get("test_score"))
    return None


CHART = ChartSpec(
    title="Prompt learning score",
    xlabel="rollouts used",
    event_xlabel="trial",
    ylabel="score (share correct)",
    legend=("Trial score (small batch): one candidate prompt scored on a small batch of training seeds, so a "
            "lucky batch reaches 1.0; best so far: the best prompt's score on the seeds the search ranks prompts "
            "by (GEPA: its validation seeds; MIPRO: its online pool), the figure the search keeps."),
    series=(
        SeriesSpec("trial", "trial score (small batch)",
                   frozenset({"gepa.trial.score", "prompt_learning.trial.score", "trial.score",
                              "mipro.trial.score", "mipro.minibatch_score", "mipro.trial.minibatch_score",
                              "prompt.learning.trial.score"}),
                   style="points", color="#1f77b4", higher_is_better=True, from_event=trial_sample),
        # the backend's own best (search validation) score when it reports one; else the running best trial
        SeriesSpec("best", "best so far",
                   frozenset({"gepa.best_score", "mipro.best_score", "prompt_learning.best_score"}),
                   style="step", color=BEST_COLOR, higher_is_better=True, best_of="trial"),
    ),
    references=(
        ReferenceSpec("baseline", "baseline (search)",
                      frozenset({"baseline.score", "prompt_learning.baseline", "gepa.baseline", "mipro.baseline",
                                 "prompt.learning.baseline"}),
                      from_event=search_baseline, keep_first=True),
        ReferenceSpec("heldout_baseline", "baseline (held-out)", from_event=heldout_baseline, when="after",
                      color="0.35", marker="D"),
        ReferenceSpec("heldout_best", "best prompt (held-out)", from_event=heldout_best, when="after",
                      color=BEST_COLOR, marker="*"),
    ),
)
