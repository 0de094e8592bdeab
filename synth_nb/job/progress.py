"""How far a job has come, from its events and status document: work done vs budget, ETA, durations.

Shared by the notebook's monitor panel and the terminal's live chart, so both say the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from synth_nb.records import TERMINAL_STATUSES

__all__ = ["Progress", "format_duration", "parse_time", "progress_of"]


def format_duration(seconds: float | None) -> str:
    """A duration a person reads: ``< 0.1 s``, ``0.4 s``, ``2.3 s``, ``12 s``, ``1 min 04 s``, ``2 h 05 min`` ("–" when unknown).

    Under ten seconds it keeps a decimal, so a fast job never reads "0s"; the unit is always written out.
    """
    if seconds is None or seconds != seconds or seconds < 0 or seconds == float("inf"):
        return "–"
    if seconds < 0.05:
        return "< 0.1 s"
    if seconds < 9.95:
        return f"{seconds:.1f} s"
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


def parse_time(value: Any) -> float | None:
    """ISO-8601 string (``Z`` allowed) or epoch number -> epoch seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class Progress:
    """Work done against the budget. Once the job ended (``ended``: its terminal status) the bar shows the
    outcome: full for a success, even one that used less than its budget; where it stopped otherwise."""

    done: float | None = None
    total: float | None = None
    unit: str = "steps"
    eta_seconds: float | None = None
    ended: str | None = None

    @property
    def fraction(self) -> float | None:
        if self.done is None:
            return None
        if self.ended == "succeeded":
            return 1.0
        if not self.total:
            return None
        return max(0.0, min(1.0, self.done / self.total))

    @property
    def outcome(self) -> Literal["running", "succeeded", "failed"]:
        """How the bar is coloured: neutral while running, green for a success, red for any other end."""
        if self.ended is None:
            return "running"
        return "succeeded" if self.ended == "succeeded" else "failed"

    def label(self) -> str:
        if self.done is None:
            return ""
        used = f"{self.done:g}/{self.total:g} {self.unit}" if self.total else f"{self.done:g} {self.unit}"
        if self.ended == "succeeded":
            return f"{used} · finished"
        if self.total:
            used += f" ({100 * (self.fraction or 0):.0f}%)"
        return f"{used} · {self.ended}" if self.ended else used

    def ended_as(self, status: str) -> Progress:
        """This progress at the job's end (no ETA any more)."""
        return replace(self, ended=status, eta_seconds=None)


_PAIRS = (  # (done key(s), total key(s), unit)
    (("rollouts_completed",), ("rollouts_total", "rollout_budget", "max_rollouts"), "rollouts"),
    (("step", "current_step", "global_step"), ("total_steps", "max_steps"), "steps"),
    (("cumulative_trials", "trials_completed", "cumulative"), ("max_trials", "total_trials"), "trials"),
)


def _first(data: Mapping[str, Any], keys: Iterable[str]) -> float | None:
    for k in keys:
        v = data.get(k)
        if isinstance(v, int | float) and not isinstance(v, bool):
            return float(v)
    return None


def progress_of(status_doc: Mapping[str, Any], events: Sequence[Any], elapsed: float | None,
                *, status: str | None = None, scan: int = 300) -> Progress:
    """Work done vs budget from the newest event that reports it (else the status document), with ETA.

    ETA prefers the backend's own ``eta_seconds``; otherwise it extrapolates the elapsed time linearly, once
    ``ETA_FROM_FRACTION`` of the work is done. A terminal ``status`` ends the progress (see ``Progress.ended``).
    """
    found = _progress_of(status_doc, events, elapsed, scan)
    return found.ended_as(status) if status in TERMINAL_STATUSES else found


def _progress_of(status_doc: Mapping[str, Any], events: Sequence[Any], elapsed: float | None,
                 scan: int) -> Progress:
    recent = list(reversed(events[-scan:]))
    for i, event in enumerate(recent):
        data = getattr(event, "data", None) or {}
        for done_keys, total_keys, unit in _PAIRS:
            done = _first(data, done_keys)
            if done is None:
                continue
            total = _first(data, total_keys)
            for older in recent[i + 1:]:  # the budget is often announced once, at the start
                if total is not None:
                    break
                total = _first(getattr(older, "data", None) or {}, total_keys)
            total = total if total is not None else _first(status_doc, total_keys)
            return _with_eta(Progress(done, total, unit, _first(data, ("eta_seconds",))), elapsed)
    for done_keys, total_keys, unit in _PAIRS:
        done, total = _first(status_doc, done_keys), _first(status_doc, total_keys)
        if done is not None:
            return _with_eta(Progress(done, total, unit, _first(status_doc, ("eta_seconds",))), elapsed)
    frac = _first(status_doc, ("progress",))
    if frac is not None and 0 <= frac <= 1:
        return _with_eta(Progress(round(frac * 100, 1), 100.0, "%"), elapsed)
    return Progress()


#: the share of the work done before an ETA is extrapolated: the first rollout or step of a job carries its
#: start-up (1 of 1,000 rollouts after 0.3 s read "ETA 3 min 54 s" for a job that ended 0.6 s later)
ETA_FROM_FRACTION = 0.05


def _with_eta(p: Progress, elapsed: float | None) -> Progress:
    f = p.fraction
    if p.eta_seconds is not None or not f or f < ETA_FROM_FRACTION or elapsed is None:
        return p
    return Progress(p.done, p.total, p.unit, elapsed * (1 - f) / f)
