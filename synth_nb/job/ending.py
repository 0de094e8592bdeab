"""How a job ended, in one place: its one stop reason, and the estimate it was sent with beside what it used.

Every door renders ``ending_of(job)`` and computes nothing of its own: the terminal's final block, the
notebook panel's status line and static row, ``summary.md``, the bundle's ``run.json``, ``synth-nb jobs`` /
``--jobs`` and the comparison table.

**The stop reason** (``StopReason``) is one of: succeeded because the work ran out (the backend's own word:
``budget_exhausted``, ``max_steps``, ``converged`` …, with the figure behind it, read by the flow from its
events and status document, hosted shapes included); stopped by a watchdog limit (which one, used of the
limit) or a plateau (after N evaluations without a new best); cancelled, and by whom (this command, the
panel's button, another client or the backend); failed, with the backend's reason in one line; lost
contact (following failed while the job had not ended); still running (``--poll-timeout`` ended the watch).

**Run health** (``synth_nb.job.health``): the signs, in what the job streamed, that its headline number
misleads (a reward rising while the eval reward falls, a validation loss rising while the train loss falls,
…), each a row with its evidence, after the gains.

**Estimate vs actual** (``Figure``): the pre-flight estimate the job was sent with (``job.estimate``, made
from its plan at submission by ``synth_nb.pipeline.estimate.plan_estimate`` and kept in its bundle) beside
what the job reports it used (``Flow.usage``: rollouts, tokens, cost) and the wall time its status gives,
each with the ratio actual / estimate.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from synth_nb.flows import get_flow
from synth_nb.flows.artifacts import FinishedJob
from synth_nb.flows.health import HealthWarning
from synth_nb.flows.outcome import Gain, Usage
from synth_nb.job.health import health_of, health_rows
from synth_nb.job.progress import format_duration, parse_time
from synth_nb.job.registry import short_reason
from synth_nb.markup import md_text
from synth_nb.records import TERMINAL_STATUSES

__all__ = ["Ending", "Figure", "StopReason", "ending_of", "short_reason", "stop_reason"]

#: the backend's words for a job that ran out of work, in plain words
FINISH_WORDS = {
    "budget_exhausted": "the search used its rollout budget",
    "max_steps": "it ran all its planned training steps",
    "converged": "the backend says it converged",
    "max_trials": "it ran all its planned trials",
    "max_rollouts": "it reached its rollout limit",
    "max_tokens": "it reached its token limit",
    "max_cost": "it reached its cost limit",
    "max_cost_usd": "it reached its cost limit",
    "max_time": "it reached its time limit",
    "max_time_seconds": "it reached its time limit",
    "completed": "it completed its work",
}
#: the longest reason a door shows (the rest of a backend's message is in the status document)
REASON_CHARS = 200
#: the status document's words for who cancelled a job, where a backend says
_CANCELLED_BY = ("cancelled_by", "canceled_by", "cancel_reason")


@dataclass(frozen=True)
class StopReason:
    """Why a job stopped: a kind every door can key on, and one line every door shows."""

    #: budget_exhausted, max_steps, converged, finished (no reason given), limit, plateau, cancelled, failed,
    #: lost_contact or still_running; another word the backend gave is kept as it is
    kind: str
    text: str
    detail: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, **self.detail}


@dataclass(frozen=True)
class Figure:
    """One figure of the job: what it used, and what its estimate said (None: not known)."""

    name: str
    actual: float | None
    actual_text: str
    estimate: float | None
    estimate_text: str

    @property
    def ratio(self) -> float | None:
        """actual / estimate (None when either is unknown, or the estimate is 0)."""
        if self.actual is None or not self.estimate:
            return None
        return self.actual / self.estimate

    def line(self) -> str:
        """``1,252 (996 search + 256 held-out) · estimate 1,256 · ×1.00`` (the ratio is actual / estimate)."""
        ratio = self.ratio
        shown = f" · ×{ratio:.2f}" if ratio is not None else ""
        return f"{self.actual_text} · {self.estimate_text}{shown}" if self.estimate_text else self.actual_text

    def as_dict(self) -> dict[str, Any]:
        return {"figure": self.name, "actual": self.actual, "estimate": self.estimate,
                "ratio": None if self.ratio is None else round(self.ratio, 4),
                "actual_text": self.actual_text, "estimate_text": self.estimate_text}


@dataclass(frozen=True)
class Ending:
    """How one job ended: its stop reason, its figures beside its estimate, and what it gained."""

    status: str
    stop: StopReason
    figures: tuple[Figure, ...] = ()
    gains: tuple[Gain, ...] = ()
    #: the estimate the job was sent with (``plan_estimate``), None when none is kept
    estimate: Mapping[str, Any] | None = None
    #: the run-health warnings of what the job streamed (``synth_nb.job.health``)
    health: tuple[HealthWarning, ...] = ()

    def rows(self) -> list[tuple[str, str]]:
        """(label, text) per line, in the order every door shows them."""
        rows = [("stopped", self.stop.text)]
        figures = [f for f in self.figures if f.actual is not None or f.estimate is not None]
        if figures:
            rows.append(("estimate", self.basis()))
        rows += [(f.name, f.line()) for f in figures]
        rows += [("gain" if i == 0 else "", g.line()) for i, g in enumerate(self.gains)]
        return rows + health_rows(self.health)

    def headline(self, job_id: str) -> str:
        """``Job pl_1 succeeded: the search used its rollout budget (budget_exhausted: 996 of 1,000 rollouts).``"""
        reason = short_reason(self.stop.text)
        said = reason if reason.startswith(self.status) else f"{self.status}: {reason}"
        return f"Job {job_id} {said}" + ("" if said.endswith((".", "…")) else ".")

    def basis(self) -> str:
        """What the estimate beside each figure was made from, and how the ratio reads."""
        if self.estimate is None:
            return "none kept (the job was not sent from here)"
        return f"from {self.estimate.get('basis') or 'the plan'}; each figure: used · estimate · ×(used / estimate)"

    def markdown(self, heading: str = "## How it ended") -> str:
        """``heading`` and a table of ``rows`` (every cell literal text: a failure reason is the backend's)."""
        lines = [heading, "", "| | |", "|---|---|"]
        lines += [f"| {md_text(label.capitalize()) if label else ' '} | {md_text(text)} |"
                  for label, text in self.rows()]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """What ``run.json`` keeps: the stop reason, the estimate and each figure beside it, the gains, the
        run-health warnings."""
        return {"stop_reason": self.stop.as_dict(), "estimate": dict(self.estimate) if self.estimate else None,
                "estimate_vs_actual": [f.as_dict() for f in self.figures],
                "gains": [{**asdict(g), "change": g.result - g.baseline} for g in self.gains],
                "health": [w.as_dict() for w in self.health]}


def _one_line(text: Any) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 1] + "…"


def _failure(job: FinishedJob) -> str:
    """The backend's reason for a failure: the status document's error, else the newest error event's."""
    error = (job.status_doc or {}).get("error")
    if isinstance(error, Mapping):
        error = error.get("message") or error.get("detail") or error
    if error:
        return _one_line(error)
    last_error = getattr(job.events, "last_error", None)
    event = last_error() if callable(last_error) else next((e for e in reversed(job.events) if e.is_error), None)
    if event is None:
        return "the backend gave no reason"
    return _one_line(event.data.get("detail") or event.data.get("error") or event.message or event.type)


def _succeeded(usage: Usage) -> StopReason:
    reason = usage.finish_reason
    if reason is None:
        return StopReason("finished", "succeeded (the backend gave no reason)")
    words = FINISH_WORDS.get(reason, f"the backend says {reason}")
    detail = f"{reason}: {usage.finish_detail}" if usage.finish_detail else reason
    return StopReason(reason, f"succeeded: {words} ({_one_line(detail)})", {"finish_reason": reason,
                                                                           "figure": usage.finish_detail or None})


def _cancelled(job: FinishedJob, usage: Usage) -> StopReason:
    by = getattr(job, "cancelled_by", None)
    if by:
        return StopReason("cancelled", f"cancelled by {by}", {"by": by})
    doc = job.status_doc or {}
    named = next((doc[k] for k in _CANCELLED_BY if isinstance(doc.get(k), str) and doc[k]), None)
    if named:
        return StopReason("cancelled", f"cancelled by {_one_line(named)} (the backend says)", {"by": named})
    return StopReason("cancelled", "cancelled by another client or on the backend (not from here)",
                      {"by": "elsewhere"})


def stop_reason(job: FinishedJob, *, timed_out: float | None = None, usage: Usage | None = None) -> StopReason:
    """The one reason ``job`` stopped (``timed_out``: ``--poll-timeout`` ended the watch after that many seconds);
    ``usage``: the flow's ``usage`` of the job when the caller has it already (a long job's is read from every
    event)."""
    status = job.status
    if status not in TERMINAL_STATUSES:
        error = getattr(job, "follow_error", None)
        if timed_out is not None:
            return StopReason("still_running", f"still {status}: stopped watching after {format_duration(timed_out)}"
                                               f" (--poll-timeout); the job keeps running", {"after": timed_out})
        if error:
            return StopReason("lost_contact", f"lost contact while it was {status}: {_one_line(error)}; it may "
                                              f"still be running (synth-nb attach {job.id})", {"error": str(error)})
        return StopReason("still_running", f"still {status}")
    watchdog = getattr(job, "watchdog", None)
    stopped = watchdog.stopped if watchdog is not None else None
    if watchdog is not None and stopped is not None:
        return StopReason("plateau" if stopped.name == "plateau" else "limit", watchdog.report(),
                          watchdog.stopped_by() or {})
    usage = usage if usage is not None else get_flow(job.flow).usage(job)
    if status == "succeeded":
        return _succeeded(usage)
    if status == "cancelled":
        return _cancelled(job, usage)
    return StopReason("failed", f"{status}: {_failure(job)}")


def _wall_seconds(job: FinishedJob) -> float | None:
    """The job's time from start to end as its status document gives it, else its events' span."""
    doc = job.status_doc or {}
    start = next((t for t in (parse_time(doc.get(k)) for k in ("started_at", "created_at")) if t is not None), None)
    end = next((t for t in (parse_time(doc.get(k)) for k in ("finished_at", "completed_at")) if t is not None), None)
    if start is None or end is None:
        events = job.events
        first = parse_time(events[0].created_at) if len(events) else None
        last = parse_time(events[-1].created_at) if len(events) else None
        start, end = first, last
    return None if start is None or end is None else max(0.0, end - start)


#: (figure, the estimate's key for it, the key of its "at least" flag)
_FIGURES = (("rollouts", "rollouts", ""), ("tokens", "tokens", "tokens_floor"), ("time", "wall_seconds", "wall_floor"),
            ("cost", "cost_usd", ""))


def _shown(name: str, value: float) -> str:
    if name == "time":
        return f"{value:.2f} s" if 0 < value < 0.05 else format_duration(value)
    return f"${value:,.4f}" if name == "cost" else f"{value:,.0f}"


def _estimated(estimate: Mapping[str, Any] | None, name: str, key: str, floor: str) -> tuple[float | None, str]:
    """The estimate's figure and how the doors say it: its value, or why there is none."""
    if estimate is None:
        return None, ""  # the basis row says none is kept
    value = estimate.get(key)
    if value is None or isinstance(value, bool):
        return None, f"not estimated: {estimate.get(key.split('_')[0] + '_how') or 'unknown'}"
    text = str(estimate["cost"]) if name == "cost" and estimate.get("cost") else _shown(name, float(value))
    return float(value), f"estimate {'at least ' if floor and estimate.get(floor) else ''}{text}"


def _figures(job: FinishedJob, usage: Usage, estimate: Mapping[str, Any] | None) -> tuple[Figure, ...]:
    actual = {"rollouts": (usage.rollouts, usage.rollouts_how), "tokens": (usage.tokens, usage.tokens_how),
              "time": (_wall_seconds(job), ""), "cost": (usage.cost_usd, "")}
    out = []
    for name, key, floor in _FIGURES:
        value, how = actual[name]
        text = "not reported" if value is None else _shown(name, value) + (f" ({how})" if how else "")
        number, said = _estimated(estimate, name, key, floor)
        out.append(Figure(name, None if value is None else float(value), text, number, said))
    return tuple(out)


def ending_of(job: FinishedJob, *, timed_out: float | None = None) -> Ending:
    """How ``job`` ended (or where it stands, when it has not): stop reason, figures beside its estimate, gains."""
    estimate = getattr(job, "estimate", None)
    estimate = estimate if isinstance(estimate, Mapping) else None
    flow = get_flow(job.flow)
    # the usage and the health rules read the same events' data: decoded once for both (``EventLog.reading_once``)
    reading_once = getattr(job.events, "reading_once", contextlib.nullcontext)
    with reading_once():
        usage = flow.usage(job)
        return Ending(job.status, stop_reason(job, timed_out=timed_out, usage=usage), _figures(job, usage, estimate),
                      tuple(flow.gains(job)), estimate, health_of(job))
