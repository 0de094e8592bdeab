"""TensorBoard: one event-file folder per job under ``--report-dir`` (``runs/<job id>/``, as HF Trainer).

Every metric series is a scalar (tag = metric name, step = its step), written with ``tensorboardX`` as it
streams; the flow's summary (prompt learning: ``summary.md``) is a text entry when the job ends. What the
folder already holds is read back with TensorBoard's own ``EventAccumulator``, so a second attach adds a
new event file holding only the points the first lacked.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from synth_nb.report._base import Point, Reporter

__all__ = ["SUMMARY_TAG", "TensorBoardReporter"]

#: the text entry's tag (``tensorboardX`` stores it as ``summary/text_summary``)
SUMMARY_TAG = "summary"


class TensorBoardReporter(Reporter):
    name = "tensorboard"
    modules = ("tensorboardX", "tensorboard")

    _writer: Any = None
    _has_summary = False

    @property
    def logdir(self) -> Path:
        return self.folder / self.job.id

    def _resume(self) -> Mapping[str, Iterable[int]]:
        from tensorboard.backend.event_processing.event_accumulator import SCALARS, TENSORS, EventAccumulator

        if not self.logdir.is_dir():
            return {}
        # size 0: every point, not a sample; no purge: a late point with a lower step drops nothing
        events = EventAccumulator(str(self.logdir), size_guidance={SCALARS: 0, TENSORS: 0},
                                  purge_orphaned_data=False)
        events.Reload()
        tags = events.Tags()
        self._has_summary = f"{SUMMARY_TAG}/text_summary" in tags.get("tensors", [])
        return {tag: [event.step for event in events.Scalars(tag)] for tag in tags.get("scalars", [])}

    def _open(self) -> Any:
        """The writer, made on first use: an attach with nothing new leaves no empty event file."""
        if self._writer is None:
            from tensorboardX import SummaryWriter

            # a suffix of its own: a second writer within the same second must not reuse the first's file
            self._writer = SummaryWriter(logdir=str(self.logdir), filename_suffix=f".{uuid.uuid4().hex[:8]}")
        return self._writer

    def _write(self, points: Sequence[Point]) -> None:
        writer = self._open()
        for point in points:
            writer.add_scalar(point.name, point.value, point.step, walltime=point.time)

    def _flushed(self) -> None:
        if self._writer is not None:
            self._writer.flush()

    def _finish(self, summary: Path | None) -> None:
        if summary is not None and not self._has_summary:
            self._open().add_text(SUMMARY_TAG, summary.read_text(encoding="utf-8"), 0)
            self._has_summary = True
        self._close()

    def _close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
