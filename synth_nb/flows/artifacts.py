"""What a finished job leaves behind, as data: a flow describes it, the notebook (or a terminal) renders it.

``FinishedJob`` is the little a flow reads from a job (so flows never import ``synth_nb.job``). Status
documents pass through ``mask_payload``: a backend that echoes a key back must not get it shown or saved.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from synth_nb.plan import mask_payload
from synth_nb.records import Event, MetricPoint
from synth_nb.untrusted import contained

__all__ = ["FALLBACK_RESULTS_FOLDER", "Artifact", "Document", "FinishedJob", "checkpoint_of", "ending_facts", "ending_rows",
           "job_results_dir", "status_artifact", "status_json", "unreadable_metrics", "unreadable_metrics_note"]

#: where result files go when a job's config named no folder (relative to the working directory)
FALLBACK_RESULTS_FOLDER = "results"


class FinishedJob(Protocol):
    """What flows read from a job to describe its results."""

    @property
    def id(self) -> str: ...
    @property
    def flow(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def status_doc(self) -> Mapping[str, Any]: ...
    @property
    def events(self) -> Sequence[Event]: ...
    @property
    def metrics(self) -> Sequence[MetricPoint]: ...


@dataclass(frozen=True)
class Document:
    """A file the user can download from the notebook: its name, media type and text."""

    name: str
    media_type: str
    text: str


@dataclass(frozen=True)
class Artifact:
    """A finished job's result: a title, its headline facts, Markdown to read, and optionally a document
    to download (shown folded: the facts say what matters, the document holds everything)."""

    title: str
    markdown: str = ""
    document: Document | None = None
    #: one short sentence each, first thing the user reads ("reward 0.18 → 0.60 over 40 steps")
    facts: tuple[str, ...] = ()


def job_results_dir(job_id: str, results_folder: Path | None) -> Path:
    """``<results_folder>/<job id>/``: one folder per job, so two jobs' ``summary.md`` never collide."""
    return contained(results_folder if results_folder is not None else Path(FALLBACK_RESULTS_FOLDER), job_id)


def unreadable_metrics(job: object) -> Sequence[Mapping[str, Any]]:
    """The metric points the backend sent for ``job`` that could not be read (``{"raw", "reason"}`` each).

    Optional, not part of ``FinishedJob``: a followed job keeps them (``JobHistory.unreadable_metrics``); a
    flow's own stand-in or a job rebuilt from a recording has none to report.
    """
    return tuple(getattr(job, "unreadable_metrics", ()))


def ending_rows(job: object) -> list[tuple[str, str]]:
    """How the job ended as (label, text) rows: its stop reason, the estimate it was sent with beside what it
    used, what it gained (``Job.ending``, the one place that says it). Optional, not part of ``FinishedJob``:
    a job rebuilt from a recording, or a flow's own stand-in, has none to say."""
    ending = getattr(job, "ending", None)
    return list(ending().rows()) if callable(ending) else []


def unreadable_metrics_note(items: Sequence[Mapping[str, Any]]) -> str:
    """"N metric points could not be read (no name / value not a number)"; empty when every one was read."""
    if not items:
        return ""
    reasons = " / ".join(dict.fromkeys(str(item.get("reason") or "unknown shape") for item in items))
    count = f"{len(items)} metric point{'s' if len(items) != 1 else ''} could not be read"
    return f"{count} ({reasons}); they are kept as sent in job.unreadable_metrics"


def status_json(job: FinishedJob) -> str:
    """The final status document, masked and pretty-printed."""
    return json.dumps(mask_payload(dict(job.status_doc or {})), indent=2, sort_keys=True, default=str)


def checkpoint_of(job: FinishedJob) -> str | None:
    """Where a stopped training job left its checkpoint (full path as the backend reports it), if it says."""
    doc = job.status_doc or {}
    for source in (doc, doc.get("result") or {}):
        for key in ("checkpoint", "checkpoint_path"):
            value = source.get(key) if isinstance(source, Mapping) else None
            if isinstance(value, str) and value:
                return value
    for event in reversed(job.events[-50:]):
        value = (event.data or {}).get("checkpoint")
        if isinstance(value, str) and value:
            return value
    return None


def ending_facts(job: FinishedJob) -> list[str]:
    """How the job ended, when that is not plain success: its error, and where a checkpoint was kept."""
    facts: list[str] = []
    error = (job.status_doc or {}).get("error")
    if job.status != "succeeded" and error:
        facts.append(f"error: {error if isinstance(error, str) else json.dumps(mask_payload(error), default=str)}")
    checkpoint = checkpoint_of(job) if job.status != "succeeded" else None
    if checkpoint:
        facts.append(f"checkpoint kept in {checkpoint}")
    return facts


def status_artifact(job: FinishedJob, facts: Sequence[str] = ()) -> Artifact:
    """The final status document, shown folded and downloadable as JSON (what a job of any flow can show),
    after ``facts`` and how the job ended."""
    return Artifact(title=f"Final status of {job.id} ({job.status})",
                    document=Document(f"{job.id}_status.json", "application/json", status_json(job)),
                    facts=(*facts, *ending_facts(job)))
