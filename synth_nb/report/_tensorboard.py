"""TensorBoard: one event-file folder per job under ``--report-dir`` (``runs/<job id>/``, as HF Trainer).

Every metric series is a scalar (step = its step) tagged with the label the job's panel gives it, then the
backend's own name (``best so far/gepa.best_score``: TensorBoard groups the series by the panel's words, and
a search for the backend's name still finds it; a metric no panel draws keeps its name), written as it streams with
TensorBoard's own event-file writer (tensorboardX would do the same, but it imports torch whenever torch is
installed: 4 s of CPU in a notebook kernel for nothing); the flow's summary (prompt learning: ``summary.md``)
is a text entry when the job ends, in the text plugin's format. What the folder already holds is read back
with TensorBoard's ``EventAccumulator``, so a second attach adds a new event file holding only the points
the first lacked.
"""

from __future__ import annotations

import shlex
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from synth_nb.flows import get_flow
from synth_nb.report._base import Point, Reporter, shown_path
from synth_nb.untrusted import contained

__all__ = ["SUMMARY_TAG", "TensorBoardReporter"]

#: the text entry's tag (stored as ``summary/text_summary``, as TensorBoard's text plugin names it)
SUMMARY_TAG = "summary"


class TensorBoardReporter(Reporter):
    name = "tensorboard"
    modules = ("tensorboard",)

    _writer: Any = None
    _has_summary = False

    @property
    def logdir(self) -> Path:
        return contained(self.folder, self.job.id)

    def where(self) -> str:
        return f"tensorboard --logdir {shlex.quote(str(shown_path(self.folder)))}"  # every job of the folder

    def stored_in(self) -> str:
        return str(shown_path(self.logdir))

    def _key(self, name: str) -> str:
        """The tag: the panel's label for the metric, then its backend name (``trial score (small batch)/…``)."""
        label = get_flow(self.job.flow).chart.label_of(name)
        return f"{label}/{name}" if label else name

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
            from tensorboard.summary.writer.event_file_writer import EventFileWriter

            # a suffix of its own: a second writer within the same second must not reuse the first's file
            self._writer = EventFileWriter(str(self.logdir), filename_suffix=f".{uuid.uuid4().hex[:8]}")
        return self._writer

    def _write(self, points: Sequence[Point]) -> None:
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.proto.summary_pb2 import Summary

        writer = self._open()
        for point in points:
            value = Summary.Value(tag=self._key(point.name), simple_value=point.value)
            writer.add_event(Event(wall_time=time.time() if point.time is None else point.time, step=point.step,
                                   summary=Summary(value=[value])))

    def _flushed(self) -> None:
        if self._writer is not None:
            self._writer.flush()

    def _finish(self, summary: Path | None) -> None:
        if summary is not None and not self._has_summary:
            self._open().add_event(_text_event(SUMMARY_TAG, summary.read_text(encoding="utf-8")))
            self._has_summary = True
        self._close()

    def _close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()


def _text_event(tag: str, text: str) -> Any:
    """A text-plugin entry (``<tag>/text_summary``, one string tensor), as ``tf.summary.text`` writes it."""
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.plugins.text.metadata import create_summary_metadata

    tensor = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf-8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    value = Summary.Value(tag=f"{tag}/text_summary", metadata=create_summary_metadata(display_name=tag,
                                                                                      description=""),
                          tensor=tensor)
    return Event(wall_time=time.time(), step=0, summary=Summary(value=[value]))
