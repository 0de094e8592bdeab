"""What a finished job leaves behind, as data: a flow describes it, the notebook (or a terminal) renders it.

``FinishedJob`` is the little a flow reads from a job (so flows never import ``synth_nb.job``). Status
documents pass through ``mask_payload``: a backend that echoes a key back must not get it shown or saved.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from synth_nb.plan import mask_payload
from synth_nb.records import Event, MetricPoint

__all__ = ["Artifact", "Document", "FinishedJob", "status_artifact", "status_json"]


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
    """A finished job's result: a title, Markdown to read, and optionally a document to download."""

    title: str
    markdown: str = ""
    document: Document | None = None


def status_json(job: FinishedJob) -> str:
    """The final status document, masked and pretty-printed."""
    return json.dumps(mask_payload(dict(job.status_doc or {})), indent=2, sort_keys=True, default=str)


def status_artifact(job: FinishedJob) -> Artifact:
    """The final status document, shown and downloadable as JSON (what a job of any flow can show)."""
    return Artifact(title=f"Final status of {job.id}",
                    document=Document(f"{job.id}_status.json", "application/json", status_json(job)))
