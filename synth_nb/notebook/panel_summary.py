"""The monitor panel's summary output: the job's result once it ended, and links to its result files.

A panel links the files its job leaves (``<results folder>/<job id>/``: result files and bundle, written once
as the job ends, whichever door followed it) and any it is asked to export elsewhere. Kept apart from the
panel's live task: the summary is content and a display id, written from the end of the job, from an export
asked at any time and again from a later cell (``republish``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from synth_nb.job.results import write_results
from synth_nb.job.view import JobView
from synth_nb.notebook import artifacts
from synth_nb.notebook.headless import SUMMARY_LINES
from synth_nb.notebook.panel_outputs import PanelOutputs, SummaryOutput

__all__ = ["PanelSummary"]


class PanelSummary:
    """The summary output ``display_id`` of ``job``'s panel: what it holds (``content``) and its sending.

    Links are relative to ``notebook_folder``; ``headless``: the text copy keeps its first ``SUMMARY_LINES``.
    Nothing is sent before ``show`` made the output."""

    def __init__(self, job: JobView, display_id: str, *, notebook_folder: Path, headless: bool) -> None:
        self.job = job
        self.display_id = display_id
        self.notebook_folder = notebook_folder
        self.content = SummaryOutput(text_lines=SUMMARY_LINES if headless else None)
        self.shown = False

    def bundle(self) -> dict[str, Any]:
        return self.content.bundle()

    def show(self) -> None:
        """Make the output in the current cell."""
        PanelOutputs.show(self.display_id, self.bundle())
        self.shown = True

    def publish(self) -> None:
        """Send the current content, once shown."""
        if self.shown:
            PanelOutputs.update(self.display_id, self.bundle())

    def republish(self) -> None:
        """Send it again (from the calling cell), when it holds anything."""
        if self.content.result or self.content.exported:
            self.publish()

    def export(self, folder: Path | None) -> list[Path]:
        """Write the job's result files into ``<folder>/<job id>/`` (default: its own folder) and link them."""
        written = artifacts.export_results(self.job, folder if folder is not None else self.job.results_folder)
        self.content.exported = artifacts.export_bundle(written, self.notebook_folder)
        self.publish()
        return written

    async def collect(self) -> str:
        """At the end: the job's result, and its result files and bundle (written once, as it ended) linked;
        returns the sentence that says where they were written (empty: none). Sent by ``publish``."""
        self.content.result = artifacts.artifact_bundle(self.job)
        results = await asyncio.to_thread(write_results, self.job)
        self.content.exported, said = artifacts.results_bundle(results, self.notebook_folder)
        return said
