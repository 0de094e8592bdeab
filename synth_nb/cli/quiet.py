"""The terminal's quiet line mode: what ``synth-nb train`` / ``attach`` print when stdout is not a terminal
(CI logs, pipes, ``--stream-format chart`` off a terminal) or with ``--stream-format quiet``.

Status changes, phases, the linked job and warning or error events are lines as in line mode; every other
update (routine events, metric points) only moves the job on, and one ``progress:`` line says where it is at
most each tenth of its work or every 30 s (``synth_nb.job.quiet.QuietProgress``, the rule the notebook's
headless panel follows too); the final block follows as in line mode. ``--stream-format cli`` keeps a line
per update anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from synth_nb.cli.printer import LinePrinter, format_event
from synth_nb.job import Job, JobUpdate
from synth_nb.job.quiet import QuietProgress

__all__ = ["QuietPrinter", "is_quiet", "line_printer"]

#: event levels that are always a line of their own
_ALARMS = {"warn", "warning", "error", "critical", "fatal"}


def is_quiet(out: TextIO, stream_format: str | None) -> bool:
    """Whether following prints quietly: asked for (``quiet``), or off a terminal unless ``cli`` was asked for."""
    if stream_format in ("quiet", "cli"):
        return stream_format == "quiet"
    isatty = getattr(out, "isatty", None)
    return not (callable(isatty) and isatty())


class QuietPrinter(LinePrinter):
    """A job listener printing the lines that matter and, for the rest, a throttled ``progress:`` line."""

    def __init__(self, job: Job, secrets: Sequence[str], **options: Any) -> None:
        super().__init__(job, secrets, **options)
        self.progress = QuietProgress(job)

    def __call__(self, update: JobUpdate) -> None:
        event = update.event
        if update.kind in ("status", "phase", "linked"):
            super().__call__(update)
        elif update.kind == "event" and event is not None and self.shows(event) and (
                event.is_error or str(event.level or "").lower() in _ALARMS):
            self.write(format_event(event))
        line = self.progress.poll()
        if line is not None:
            self.emit(f"progress: {line}")


def line_printer(job: Job, secrets: Sequence[str], *, quiet: bool, **options: Any) -> LinePrinter:
    """The listener that prints ``job``'s updates: quiet, or a line per update."""
    return (QuietPrinter if quiet else LinePrinter)(job, secrets, **options)
