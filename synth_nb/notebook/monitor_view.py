"""Pure pieces of the monitor panel: which events are noise, progress/ETA, stall detection, HTML/text.

Nothing here touches IPython or the network, so the panel's behaviour is testable with plain objects.
The hidden-by-default lists are the ones ``synth-ai train`` 0.2.24 uses (its CLI handlers and default
stream filters); errors are never hidden.
"""

from __future__ import annotations

import html
import statistics
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from synth_nb.flows import is_noise as _flow_noise
from synth_nb.records import TERMINAL_STATUSES

__all__ = [
    "Progress",
    "StallDetector",
    "format_duration",
    "is_error",
    "is_noise",
    "progress_of",
    "render_html",
    "render_text",
    "status_announcement",
    "visible_events",
]

def is_error(event: Any) -> bool:
    etype = (getattr(event, "type", "") or "").lower()
    return (getattr(event, "level", "") or "").lower() == "error" or etype.endswith(".failed")


def is_noise(flow: str, event: Any) -> bool:
    """True if the CLI would hide ``event`` for ``flow`` by default (the rule lives in the flow module)."""
    return _flow_noise(flow, event)


def visible_events(flow: str, events: Sequence[Any], limit: int, *, show_all: bool = False) -> list[Any]:
    """The newest ``limit`` events, noise removed unless ``show_all``; scans back only as far as needed."""
    picked: list[Any] = []
    for event in reversed(events):
        if show_all or not is_noise(flow, event):
            picked.append(event)
            if len(picked) >= limit:
                break
    picked.reverse()
    return picked


def format_duration(seconds: float | None) -> str:
    if seconds is None or seconds != seconds or seconds < 0:
        return "–"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


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
    done: float | None = None
    total: float | None = None
    unit: str = "steps"
    eta_seconds: float | None = None

    @property
    def fraction(self) -> float | None:
        if self.done is None or not self.total:
            return None
        return max(0.0, min(1.0, self.done / self.total))

    def label(self) -> str:
        if self.done is None:
            return ""
        if not self.total:
            return f"{self.done:g} {self.unit}"
        return f"{self.done:g}/{self.total:g} {self.unit} ({100 * (self.fraction or 0):.0f}%)"


_PAIRS = (  # (done key(s), total key(s), unit)
    (("rollouts_completed",), ("rollouts_total", "rollout_budget", "max_rollouts"), "rollouts"),
    (("step", "current_step", "global_step"), ("total_steps", "max_steps"), "steps"),
    (("cumulative_trials", "trials_completed", "cumulative"), ("max_trials", "total_trials"), "trials"),
)


def _first(data: dict[str, Any], keys: Iterable[str]) -> float | None:
    for k in keys:
        v = data.get(k)
        if isinstance(v, int | float) and not isinstance(v, bool):
            return float(v)
    return None


def progress_of(status_doc: dict[str, Any], events: Sequence[Any], elapsed: float | None,
                *, scan: int = 300) -> Progress:
    """Work done vs budget from the newest event that reports it (else the status document), with ETA.

    ETA prefers the backend's own ``eta_seconds``; otherwise it extrapolates the elapsed time linearly.
    """
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


def _with_eta(p: Progress, elapsed: float | None) -> Progress:
    f = p.fraction
    if p.eta_seconds is not None or not f or elapsed is None:
        return p
    return Progress(p.done, p.total, p.unit, elapsed * (1 - f) / f)


class StallDetector:
    """Flags a job whose next event is much later than its usual gap between events.

    The usual gap is the median of the recent live gaps; history replayed in a burst does not count
    because arrivals are timed on the client.
    """

    def __init__(self, factor: float = 5.0, min_seconds: float = 30.0, window: int = 30) -> None:
        self.factor, self.min_seconds = factor, min_seconds
        self.gaps: deque[float] = deque(maxlen=window)
        self.last: float | None = None

    def observe(self, now: float) -> None:
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now

    def usual_gap(self) -> float | None:
        return statistics.median(self.gaps) if self.gaps else None

    def stalled_for(self, now: float) -> float | None:
        """Seconds since the last event if that is a stall, else None."""
        if self.last is None:
            return None
        quiet = now - self.last
        threshold = max(self.factor * (self.usual_gap() or 0.0), self.min_seconds)
        return quiet if quiet > threshold else None


@dataclass
class PanelState:
    """Everything the status area shows, computed by the panel and rendered by the two functions below."""

    job_id: str
    flow: str
    algorithm: str | None
    status: str
    elapsed: float | None
    progress: Progress
    events: list[Any]
    hidden_count: int
    show_all: bool
    stalled_for: float | None = None
    usual_gap: float | None = None
    note: str | None = None
    error: str | None = None


def _terminal(state: PanelState) -> bool:
    return state.status in TERMINAL_STATUSES


def _event_line(event: Any) -> str:
    level = (getattr(event, "level", "") or "info").lower()
    msg = (getattr(event, "message", "") or "").strip()
    head = f"[{getattr(event, 'seq', '?')}] {getattr(event, 'type', '')}"
    if level not in ("info", ""):
        head += f" ({level})"
    return f"{head}: {msg}" if msg else head


def render_text(state: PanelState) -> str:
    flow = state.flow + (f"/{state.algorithm}" if state.algorithm else "")
    lines = [f"{state.job_id} · {flow} · status={state.status} · elapsed {format_duration(state.elapsed)}"]
    if state.progress.done is not None:
        eta = "" if _terminal(state) else f" · ETA {format_duration(state.progress.eta_seconds)}"
        lines.append(f"progress {state.progress.label()}{eta}")
    if state.stalled_for is not None:
        lines.append(f"! no event for {format_duration(state.stalled_for)}"
                     f" (usual gap {format_duration(state.usual_gap)})")
    for text in (state.error, state.note):
        if text:
            lines.append(text)
    lines.extend(("! " if is_error(e) else "  ") + _event_line(e) for e in state.events)
    return "\n".join(lines)


#: theme colours mixed toward the text colour keep >= 4.5:1 in light and dark themes
_STYLE = (
    "<style>.synth-monitor{font-family:var(--jp-ui-font-family,sans-serif);font-size:13px;"
    "--synth-bad:color-mix(in srgb,var(--jp-error-color1,#d32f2f) 70%,var(--jp-ui-font-color1,#1f1f1f))}"
    ".synth-monitor .synth-err{color:var(--synth-bad);font-weight:600}"
    ".synth-monitor .synth-stall{border-left:3px solid color-mix(in srgb,var(--jp-warn-color1,#f57c00) 60%,"
    "var(--jp-ui-font-color1,#1f1f1f));padding-left:6px}"
    ".synth-monitor ol{margin:4px 0;padding-left:0;list-style:none;font-family:var(--jp-code-font-family,monospace);"
    "font-size:12px}</style>"
)


def status_announcement(state: PanelState) -> str:
    """What the panel's live region says: status, note, error and stall, but not the ticking clock.

    It changes only when one of those changes, so a screen reader hears news, not every refresh.
    """
    parts = [f"Job {state.job_id}: {state.status}."]
    if state.stalled_for is not None:
        parts.append("No event for much longer than usual: the job may be stalled.")
    parts.extend(f"{text}." if not text.endswith((".", "…")) else text for text in (state.error, state.note) if text)
    return " ".join(parts)


def render_html(state: PanelState) -> str:
    """The status output. No live-region roles here: the output is re-rendered on every refresh, so the
    panel announces through its ``LiveRegion`` widget instead (``status_announcement``)."""
    esc = html.escape
    flow = state.flow + (f" / {state.algorithm}" if state.algorithm else "")
    parts = [
        f"<div class='synth-monitor' data-job-id='{esc(state.job_id)}' data-status='{esc(state.status)}'>",
        _STYLE,
        f"<div class='synth-status-line'><strong>{esc(state.job_id)}</strong> · {esc(flow)} · status "
        f"<span class='synth-status synth-status-{esc(state.status)}'>{esc(state.status)}</span>"
        f" · elapsed {format_duration(state.elapsed)}",
    ]
    p = state.progress
    if p.done is not None:
        parts.append("</div>" if _terminal(state) else f" · ETA {format_duration(p.eta_seconds)}</div>")
        if p.fraction is not None:
            parts.append(f"<progress class='synth-progress' max='1' value='{p.fraction:.4f}' "
                         f"aria-label='progress'></progress> ")
        parts.append(f"<span class='synth-progress-label'>{esc(p.label())}</span>")
    else:
        parts.append("</div>")
    if state.stalled_for is not None:
        parts.append(f"<div class='synth-stall'>⚠ No event for {format_duration(state.stalled_for)} "
                     f"(usual gap {format_duration(state.usual_gap)}): the job may be stalled.</div>")
    if state.error:
        parts.append(f"<div class='synth-err'>⚠ {esc(state.error)}</div>")
    if state.note:
        parts.append(f"<div class='synth-note'>{esc(state.note)}</div>")
    items = "".join(
        f"<li class='{'synth-err' if is_error(e) else 'synth-event'}'>{'⚠ ' if is_error(e) else ''}"
        f"{esc(_event_line(e))}</li>"
        for e in state.events
    )
    hidden = "" if state.show_all or not state.hidden_count else f" ({state.hidden_count} routine hidden)"
    parts.append(f"<div class='synth-events-head'>latest events{hidden}</div><ol class='synth-events'>{items}</ol>")
    parts.append("</div>")
    return "".join(parts)
