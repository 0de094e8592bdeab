"""How a job's phases, last metric values and linked job are worded: one wording for the terminal's lines
(``synth_nb.cli.printer``) and the notebook's monitor panel, each door naming its own way to attach."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from synth_nb.flows.artifacts import FinishedJob
from synth_nb.job.logs import MetricLog
from synth_nb.records import MetricPoint

__all__ = ["format_phase", "latest_metrics", "linked_followed", "linked_summary",
           "linked_unfollowable", "metric_values", "phase_names", "phases_line"]


def _phase(entry: Mapping[str, Any]) -> str | None:
    phase = entry.get("phase")
    return phase if isinstance(phase, str) and phase else None


def _message(entry: Mapping[str, Any]) -> str | None:
    message = entry.get("message")
    return message if isinstance(message, str) and message else None


def format_phase(entry: Mapping[str, Any]) -> str:
    """A timeline entry as 0.2.24's CLI prints it (``timeline=training``), with its message when it has one."""
    phase = _phase(entry)
    if phase is None:
        return f"timeline entry without a phase: {json.dumps(entry.get('raw', entry), default=str)[:300]}"
    message = _message(entry)
    return f"timeline={phase}" + (f": {message}" if message else "")


def phase_names(timeline: Iterable[Mapping[str, Any]]) -> list[str]:
    """The phases a timeline went through, in order (entries without a phase are left out)."""
    return [phase for phase in map(_phase, timeline) if phase is not None]


def phases_line(timeline: Sequence[Mapping[str, Any]], *, arrow: str = "->", newest_message: bool = False) -> str:
    """``queued -> training -> succeeded`` ("" before any phase); with ``newest_message``, the newest phase's
    message after it (``… -> failed: task app unreachable``)."""
    names = phase_names(timeline)
    if not names:
        return ""
    line = f" {arrow} ".join(names)
    if newest_message:
        newest = next(entry for entry in reversed(timeline) if _phase(entry) is not None)
        message = _message(newest)
        line += f": {message}" if message else ""
    return line


def latest_metrics(metrics: Sequence[MetricPoint]) -> list[MetricPoint]:
    """The point with the highest step of each metric name, in the order the names first came."""
    if isinstance(metrics, MetricLog):
        return list(metrics.latest().values())
    latest: dict[str, MetricPoint] = {}
    for point in metrics:
        if point.name not in latest or point.step >= latest[point.name].step:
            latest[point.name] = point
    return list(latest.values())


def metric_values(points: Iterable[MetricPoint]) -> str:
    """``train.loss=0.7100 (step 2), val.loss=0.8800 (step 1)``."""
    return ", ".join(f"{p.name}={p.value:.4f} (step {p.step})" for p in points)


def linked_followed(linked: FinishedJob, attach: str, *, marked: str = "") -> str:
    """The line saying the linked job is followed alongside, and how to follow it alone (``attach``: the
    door's command before the id); ``marked``: how its own lines are told apart, if they are shown."""
    return (f"linked job {linked.id} ({linked.flow}, {linked.status}, {len(linked.events)} events so far) is "
            f"followed too{'; ' + marked if marked else ''} ({attach} {linked.id} follows it alone)")


def linked_summary(linked: FinishedJob, attach: str) -> str:
    """The linked job once followed to the end: ``ID (flow): status, N events, M metrics (ATTACH ID)``."""
    return (f"{linked.id} ({linked.flow}): {linked.status}, {len(linked.events)} events, {len(linked.metrics)} "
            f"metrics ({attach} {linked.id})")


def linked_unfollowable(note: Mapping[str, Any]) -> str:
    """``ID could not be followed: why`` for a linked id the backend did not let us follow."""
    return f"{note.get('job_id')} could not be followed: {note.get('error', 'not found')}"
