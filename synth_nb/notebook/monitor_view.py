"""Pure pieces of the monitor panel: which events are noise, progress/ETA, stall detection, HTML/text.

Nothing here touches IPython or the network, so the panel's behaviour is testable with plain objects.
The hidden-by-default lists are the ones ``synth-ai train`` 0.2.24 uses (its CLI handlers and default
stream filters); errors are never hidden.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from synth_nb.flows import is_noise as _flow_noise
from synth_nb.job import JobView
from synth_nb.job.describe import (
    latest_metrics,
    linked_followed,
    linked_summary,
    linked_unfollowable,
    metric_values,
    phases_line,
)
from synth_nb.job.health import HealthWarning
from synth_nb.job.progress import Progress, format_duration, progress_of
from synth_nb.markup import html_text, no_math_html
from synth_nb.records import TERMINAL_STATUSES

__all__ = [
    "Progress",
    "StallDetector",
    "format_duration",
    "is_error",
    "is_noise",
    "linked_lines",
    "phases_of",
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


#: how a notebook follows one job alone
ATTACH = "%synth_train --attach"


def phases_of(job: JobView) -> str:
    """``phases: queued → training``, with the newest phase's message ("" before the timeline has any)."""
    line = phases_line(job.timeline, arrow="→", newest_message=True)
    return f"phases: {line}" if line else ""


def linked_lines(job: JobView, *, final: bool) -> list[str]:
    """The job its status links to, worded as the terminal's lines word it: while followed, its flow, status,
    events and how to follow it alone; once over, its status, counts and last metric values."""
    note, linked = job.linked_note, job.linked
    if note is None:
        return []
    if linked is None or linked.id != note.get("job_id"):
        return [f"linked job {linked_unfollowable(note)}"]
    if not final:
        return [linked_followed(linked, ATTACH)]
    latest = latest_metrics(linked.metrics)
    return [f"linked job: {linked_summary(linked, ATTACH)}",
            *([f"linked last metrics: {metric_values(latest)}"] if latest else [])]


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
    #: the kernel following the job stopped before it ended: the status is only what was last seen
    last_seen: bool = False
    #: ``phases_of``: the job's timeline so far
    phases: str = ""
    #: ``linked_lines``: the job its status links to
    linked: tuple[str, ...] = ()
    #: once it ended: (label, text) of its estimate beside what it used and its gains (``Ending.rows``)
    ending: tuple[tuple[str, str], ...] = ()
    #: the run-health warnings so far (``synth_nb.job.health``), each with its evidence
    health: tuple[HealthWarning, ...] = ()

    @property
    def status_text(self) -> str:
        return f"unknown (last seen {self.status})" if self.last_seen else self.status


def _terminal(state: PanelState) -> bool:
    """No ETA: the job ended, or nobody follows it any more."""
    return state.status in TERMINAL_STATUSES or state.last_seen


def _event_line(event: Any) -> str:
    level = (getattr(event, "level", "") or "info").lower()
    msg = (getattr(event, "message", "") or "").strip()
    head = f"[{getattr(event, 'seq', '?')}] {getattr(event, 'type', '')}"
    if level not in ("info", ""):
        head += f" ({level})"
    return f"{head}: {msg}" if msg else head


def render_text(state: PanelState) -> str:
    flow = state.flow + (f"/{state.algorithm}" if state.algorithm else "")
    lines = [f"{state.job_id} · {flow} · status={state.status_text} · elapsed {format_duration(state.elapsed)}"]
    if state.progress.done is not None:
        eta = "" if _terminal(state) else f" · ETA {format_duration(state.progress.eta_seconds)}"
        lines.append(f"progress {state.progress.label()}{eta}")
    if state.phases:
        lines.append(state.phases)
    lines.extend(state.linked)
    if state.stalled_for is not None:
        lines.append(f"! no event for {format_duration(state.stalled_for)}"
                     f" (usual gap {format_duration(state.usual_gap)})")
    for text in (state.error, state.note):
        if text:
            lines.append(text)
    lines.extend(f"! warning: {warning.line()}" for warning in state.health)
    lines.extend(f"{label + ':' if label else '':<10}{text}" for label, text in state.ending)
    lines.extend(("! " if is_error(e) else "  ") + _event_line(e) for e in state.events)
    return "\n".join(lines)


#: theme colours mixed toward the text colour keep >= 4.5:1 in light and dark themes; long tokens (event
#: names, job ids) wrap, so nothing scrolls sideways in a 640 px window
_STYLE = (
    "<style>.synth-monitor{font-family:var(--jp-ui-font-family,sans-serif);font-size:13px;overflow-wrap:anywhere;"
    "--synth-bad:color-mix(in srgb,var(--jp-error-color1,#d32f2f) 70%,var(--jp-ui-font-color1,#1f1f1f))}"
    ".synth-monitor .synth-err{color:var(--synth-bad);font-weight:600}"
    ".synth-monitor .synth-health{border-left:3px solid var(--synth-bad);padding-left:6px;margin:2px 0}"
    ".synth-monitor .synth-stall{border-left:3px solid color-mix(in srgb,var(--jp-warn-color1,#f57c00) 60%,"
    "var(--jp-ui-font-color1,#1f1f1f));padding-left:6px}"
    ".synth-monitor ol{margin:4px 0;padding-left:0;list-style:none;font-family:var(--jp-code-font-family,monospace);"
    "font-size:12px}"
    # the panel's summary (Markdown, no class of its own) follows the status in the same output area: its
    # code spans (a job id in its heading, a model id, the folder its files went to) wrap instead of widening
    # a narrow notebook; a table's cells and a code block keep theirs (they scroll)
    ".jp-OutputArea-child:has(.synth-monitor)~.jp-OutputArea-child :not(pre,td,th)>code{overflow-wrap:anywhere}"
    # the row's static copy ends with its last message ("Wrote the job's bundle to .synth_nb/runs/<job id>/")
    ".synth-controls-snapshot{overflow-wrap:anywhere}"
    "</style>"
)


#: the bar's colour once the job ended (inline, so copies without the style block keep it); >= 3:1 on
#: the light and the dark theme's background
_BAR_COLOURS = {"succeeded": "var(--jp-success-color1,#388e3c)", "failed": "var(--jp-error-color1,#d32f2f)"}


def status_announcement(state: PanelState) -> str:
    """What the panel's live region says: status, note, error and stall, but not the ticking clock.

    It changes only when one of those changes, so a screen reader hears news, not every refresh.
    """
    parts = [f"Job {state.job_id}: {state.status}."]
    if state.stalled_for is not None:
        parts.append("No event for much longer than usual: the job may be stalled.")
    if state.health:
        parts.append(f"{len(state.health)} run-health warning{'s' if len(state.health) != 1 else ''}: "
                     f"{'; '.join(warning.headline for warning in state.health)}.")
    news = [state.error, _without_status(state.note, state.status)]
    parts.extend(f"{text}." if not text.endswith((".", "…")) else text for text in news if text)
    return " ".join(parts)


def _without_status(note: str | None, status: str) -> str:
    """The note minus the status the announcement has just said ("cancelled: the backend confirmed…" →
    "The backend confirmed…"; "finished: succeeded" → nothing), capitalised as a sentence."""
    text = (note or "").strip()
    for said in (f"finished: {status}", f"{status}:"):
        if text.startswith(said):
            text = text[len(said):].strip()
    return text[:1].upper() + text[1:]


def render_html(state: PanelState) -> str:
    """The status output. No live-region roles here: the output is re-rendered on every refresh, so the
    panel announces through its ``LiveRegion`` widget instead (``status_announcement``)."""
    esc = html_text
    flow = state.flow + (f" / {state.algorithm}" if state.algorithm else "")
    parts = [
        f"<div class='synth-monitor' data-job-id='{esc(state.job_id)}' data-status='{esc(state.status)}'>",
        _STYLE,
        f"<div class='synth-status-line'><strong>{esc(state.job_id)}</strong> · {esc(flow)} · status "
        f"<span class='synth-status synth-status-{esc(state.status)}'>{esc(state.status_text)}</span>"
        f" · elapsed {format_duration(state.elapsed)}",
    ]
    p = state.progress
    if p.done is not None:
        parts.append("</div>" if _terminal(state) else
                     f"<span class='synth-eta'> · ETA {format_duration(p.eta_seconds)}</span></div>")
        if p.fraction is not None:
            colour = f" style='accent-color:{_BAR_COLOURS[p.outcome]}'" if p.outcome in _BAR_COLOURS else ""
            parts.append(f"<progress class='synth-progress synth-progress-{p.outcome}' max='1' "
                         f"value='{p.fraction:.4f}' aria-label='Progress of job {esc(state.job_id)}'{colour}></progress> ")
        parts.append(f"<span class='synth-progress-label'>{esc(p.label())}</span>")
    else:
        parts.append("</div>")
    if state.phases:
        parts.append(f"<div class='synth-phases'>{esc(state.phases)}</div>")
    parts.extend(f"<div class='synth-linked'>{esc(line)}</div>" for line in state.linked)
    if state.stalled_for is not None:
        parts.append(f"<div class='synth-stall'>⚠ No event for {format_duration(state.stalled_for)} "
                     f"(usual gap {format_duration(state.usual_gap)}): the job may be stalled.</div>")
    if state.error:
        parts.append(f"<div class='synth-err'>⚠ {esc(state.error)}</div>")
    if state.note:
        parts.append(f"<div class='synth-note'>{esc(state.note)}</div>")
    parts.extend(_health_html(warning) for warning in state.health)
    if state.ending:
        rows = "".join(f"<tr><th scope='row'>{esc(label)}</th><td>{esc(text)}</td></tr>" for label, text in state.ending)
        parts.append(f"<table class='synth-ending' aria-label='What the job used, beside its estimate'>{rows}</table>")
    items = "".join(
        f"<li class='{'synth-err' if is_error(e) else 'synth-event'}'>{'⚠ ' if is_error(e) else ''}"
        f"{esc(_event_line(e))}</li>"
        for e in state.events
    )
    hidden = "" if state.show_all or not state.hidden_count else f" ({state.hidden_count} routine hidden)"
    parts.append(f"<div class='synth-events-head'>latest events{hidden}</div><ol class='synth-events'>{items}</ol>")
    parts.append("</div>")
    return no_math_html("".join(parts))


def _health_html(warning: HealthWarning) -> str:
    """One warning: its headline, its evidence and the series it comes from (all literal text)."""
    esc = html_text
    source = f" <span class='synth-health-from'>(from: {esc(', '.join(warning.series))})</span>" if warning.series else ""
    return (f"<div class='synth-health' data-code='{esc(warning.code)}'>⚠ <strong>Run health: "
            f"{esc(warning.headline)}</strong>: {esc(warning.evidence)}{source}</div>")
