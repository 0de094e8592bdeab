"""A prompt-learning job's baseline and best score, wherever the backend put them.

synth-ai 0.2.24's results writer reads the best score from ``best.prompt``, ``gepa.complete``,
``mipro.complete`` / ``mipro.job.completed``, and the baseline from a ``validation.scored`` event flagged
``is_baseline`` *or* whose message names the baseline. The hosted backend has been seen to send the best
score as ``data.score`` and the baseline only in the message text ("baseline val_accuracy=0.400 (N=50)");
both are read here, for the summary, the explorer and the CLI's final block alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["SCORE_EVENT_TYPES", "Scores", "baseline_in", "best_in", "job_scores"]

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


def _number(value: Any) -> float | None:
    if isinstance(value, Mapping):  # ``{"accuracy": …}`` as candidates carry it
        value = value.get("accuracy", value.get("score"))
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


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
        found = _number(data.get("accuracy", data.get("score")))
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
