"""A prompt-learning job's baseline and best score, wherever the backend put them.

synth-ai 0.2.24's results writer reads the best score from ``best.prompt``, ``gepa.complete``,
``mipro.complete`` / ``mipro.job.completed``, and the baseline from a ``validation.scored`` event flagged
``is_baseline`` *or* whose message names the baseline. The hosted backend has been seen to send the best
score as ``data.score`` and the baseline only in the message text ("baseline val_accuracy=0.400 (N=50)");
both are read here, for the summary, the explorer and the CLI's final block alike.

Later releases' backends write a candidate's or a baseline's score as a reward (``reward``,
``outcome_objectives.reward``, ``objectives.reward`` or ``outcome_reward``) where 0.2.24's write
``accuracy``: ``score_value`` reads either, so a job shows the same scores whichever dialect it came in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["SCORE_EVENT_TYPES", "Scores", "baseline_in", "best_in", "instance_values", "job_scores", "score_value"]

#: completion events that carry the best score, most trusted first
_BEST_TYPES = ("prompt.learning.final.results", "prompt.learning.best.prompt", "prompt.learning.mipro.complete",
               "mipro.job.completed", "prompt.learning.gepa.complete")
_BASELINE_TYPES = ("prompt.learning.validation.scored", "prompt.learning.validation.summary", "mipro.baseline.test")
SCORE_EVENT_TYPES = frozenset((*_BEST_TYPES, *_BASELINE_TYPES))
_BASELINE_TEXT = re.compile(r"\bbaseline\b[^=:\d]*[=:]\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)


@dataclass(frozen=True)
class Scores:
    baseline: float | None
    best: float | None


def _real(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def score_value(entry: Mapping[str, Any]) -> float | None:
    """The score an entry states: ``accuracy`` (0.2.24), else the later releases' reward spellings, else
    ``score`` (a number, or a mapping read the same way, as optimized candidates carry it)."""
    for objectives in (entry.get("outcome_objectives"), entry.get("objectives")):
        if isinstance(objectives, Mapping) and _real(objectives.get("reward")) is not None:
            break
    else:
        objectives = {}
    for value in (entry.get("accuracy"), entry.get("reward"), objectives.get("reward"), entry.get("outcome_reward")):
        if _real(value) is not None:
            return _real(value)
    score = entry.get("score")
    return score_value(score) if isinstance(score, Mapping) else _real(score)


def instance_values(entry: Mapping[str, Any]) -> list[Any] | None:
    """Per-seed scores as listed: ``instance_scores`` (0.2.24), else the later ``instance_rewards``."""
    for key in ("instance_scores", "instance_rewards"):
        if isinstance(entry.get(key), list):
            return list(entry[key])
    return None


def _number(value: Any) -> float | None:
    return score_value(value) if isinstance(value, Mapping) else _real(value)


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def best_in(data: Mapping[str, Any]) -> float | None:
    """The best score of a completion event: ``best_score``, else ``score``, else MIPRO's full / minibatch."""
    for key in ("best_score", "score", "best_full_score", "best_minibatch_score"):
        found = _number(data.get(key))
        if found is not None:
            return found
    return None


def baseline_in(etype: str, data: Mapping[str, Any], message: str) -> float | None:
    """The baseline score an event states, if it states one."""
    if etype == "prompt.learning.validation.scored":
        named = bool(data.get("is_baseline")) or "baseline" in message.lower()
        if not named:
            return None
        found = score_value(data)
        match = _BASELINE_TEXT.search(message)
        return found if found is not None else (float(match.group(1)) if match else None)
    if etype == "prompt.learning.validation.summary":
        return _number(data.get("baseline"))
    if etype == "mipro.baseline.test":
        return _number(data.get("test_score", data.get("score")))
    return None


def job_scores(status: Mapping[str, Any], events: Iterable[Any]) -> Scores:
    """Baseline and best from the status document and the events (``Event`` models or dicts)."""
    best: dict[str, float] = {}
    baselines: dict[str, float] = {}
    for event in events:
        etype = str(_field(event, "type") or "")
        data = _field(event, "data")
        data = data if isinstance(data, Mapping) else {}
        if etype in _BEST_TYPES:
            found = best_in(data)
            if found is not None:
                best[etype] = found  # the last of each type wins
        if etype in _BASELINE_TYPES and etype not in baselines:
            base = baseline_in(etype, data, str(_field(event, "message") or ""))
            if base is not None:
                baselines[etype] = base
    best_score = _number(status.get("best_score"))
    if best_score is None:
        best_score = next((best[t] for t in _BEST_TYPES if t in best), None)
    baseline = next((baselines[t] for t in _BASELINE_TYPES if t in baselines), None)
    return Scores(baseline if baseline is not None else _number(status.get("baseline_score")), best_score)
