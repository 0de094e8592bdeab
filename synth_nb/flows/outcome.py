"""What a finished job reports it used and gained, read from its events and status document, in one shape.

A flow says what its own events report (``Flow.usage``, ``Flow.gains``): rollouts, tokens, cost and the reason
the backend gives for the end (``finish_reason`` and the like), and the headline measure before and after,
with what it was measured on. ``reported_usage`` is what any backend's events say in the names the hosted
backend and the embedded one share (``rollouts_completed``, ``token_count_total``, ``total_usd``,
``finish_reason``, a training event's ``steps`` of ``total_steps``); a flow adds what only its events say.
The job layer (``synth_nb.job.ending``) turns these into the one stop reason and the estimate-vs-actual
figures every door shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from synth_nb.flows.artifacts import FinishedJob

__all__ = ["Gain", "Usage", "count_of", "events_data", "reported_usage"]

#: absolute rollout counts an event or the status document reports (the newest wins)
ROLLOUT_KEYS = ("rollouts_completed", "rollouts_used", "total_rollouts")
#: tokens used in all, most inclusive first
TOKEN_KEYS = ("token_count_total", "total_tokens_used", "total_tokens", "tokens_used", "token_count")
#: what the job cost, in US dollars
COST_KEYS = ("total_usd", "total_cost_usd", "cost_usd")
#: why the backend says the job ended (0.2.24's ``finish_reason``; later releases' names)
REASON_KEYS = ("finish_reason", "stop_reason", "termination_reason", "stopped_reason")
#: the events read from the end of a long history for these figures (completion events come last)
NEWEST = 400


@dataclass(frozen=True)
class Usage:
    """What the job reports it used, and why the backend says it ended. None: not reported."""

    rollouts: int | None = None
    #: how ``rollouts`` is made up ("996 search + 256 held-out")
    rollouts_how: str = ""
    tokens: int | None = None
    tokens_how: str = ""
    cost_usd: float | None = None
    #: the backend's own word for the end ("budget_exhausted", "max_steps", "converged", "cancelled" ...)
    finish_reason: str | None = None
    #: the figure behind it, in words ("996 of 1,000 rollouts", "192 of 192 steps")
    finish_detail: str = ""


@dataclass(frozen=True)
class Gain:
    """The headline measure at the start and at the end of the job, and what it was measured on."""

    #: what is measured ("held-out score", "eval reward", "validation loss")
    measure: str
    baseline: float
    result: float
    higher_is_better: bool
    #: the data it was measured on ("64 held-out seeds (test pool)")
    measured_on: str = ""
    #: measured on data the run did not learn from (a test pool, evaluation seeds, a validation split), as
    #: opposed to the search's or the training's own scores
    held_out: bool = False

    def line(self) -> str:
        """``held-out score 0.7500 → 0.8281: +0.0781 (+10.4%) on 64 held-out seeds``."""
        change = self.result - self.baseline
        relative = f", {change / abs(self.baseline) * 100:+.1f}%" if self.baseline else ""
        better = (change > 0) == self.higher_is_better if change else None
        word = "" if better is None else (" better" if better else " worse")
        on = f" on {self.measured_on}" if self.measured_on else ""
        return f"{self.measure} {self.baseline:.4f} → {self.result:.4f}: {change:+.4f}{relative}{word}{on}"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def count_of(value: Any) -> int | None:
    """A whole count as reported (a float such as 996.0 included), else None."""
    number = _number(value)
    return int(number) if number is not None and number == int(number) and number >= 0 else None


def _newest(job: FinishedJob) -> list[Mapping[str, Any]]:
    """The data of the newest events, newest first, then the status document and its ``result``."""
    events = job.events
    recent = events[-NEWEST:] if len(events) > NEWEST else list(events)
    doc = job.status_doc or {}
    result = doc.get("result")
    stats = (doc.get("metadata") or {}).get("stats") if isinstance(doc.get("metadata"), Mapping) else None
    found = [doc, *(d for d in (result, stats) if isinstance(d, Mapping))]
    return found + [e.data for e in reversed(recent) if isinstance(e.data, Mapping)]


def _first(sources: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> Any:
    for data in sources:
        for key in keys:
            value = data.get(key)
            if value is not None and value != "":
                return value
    return None


def _steps(sources: Sequence[Mapping[str, Any]], job: FinishedJob) -> tuple[int, int] | None:
    """(steps done, steps planned) from a training event that reports both (``steps``, ``total_steps``), or the
    planned ones and the highest step of the job's metric points (a backend that reports only the total)."""
    for data in sources:
        done, total = count_of(data.get("steps")), count_of(data.get("total_steps"))
        if total and done is None and len(job.metrics):
            done = max(int(p.step) for p in job.metrics[-NEWEST:])
        if done is not None and total:
            return done, total
    return None


def events_data(job: FinishedJob, *types: str) -> list[Mapping[str, Any]]:
    """The data of the job's events of ``types``, in order (a followed job's log reads its type column only)."""
    data_of_types = getattr(job.events, "data_of_types", None)
    if callable(data_of_types):  # the data alone, no event built
        return list(data_of_types(types))
    events = (e for e in job.events if e.type in types)
    return [e.data if isinstance(e.data, Mapping) else {} for e in events]


def reported_usage(job: FinishedJob) -> Usage:
    """What the job's newest events and status document report, in the names every backend shares."""
    sources = _newest(job)
    rollouts = max((c for d in sources for k in ROLLOUT_KEYS if (c := count_of(d.get(k))) is not None), default=None)
    tokens = count_of(_first(sources, TOKEN_KEYS))
    cost = _number(_first(sources, COST_KEYS))
    reason = _first(sources, REASON_KEYS)
    detail = ""
    steps = _steps(sources, job)
    if steps is not None:
        done, total = steps
        detail = f"{done:,} of {total:,} steps"
        if not isinstance(reason, str) and done >= total and job.status == "succeeded":
            reason = "max_steps"
    return Usage(rollouts=rollouts, tokens=tokens, cost_usd=cost,
                 finish_reason=reason if isinstance(reason, str) and reason.strip() else None, finish_detail=detail)
