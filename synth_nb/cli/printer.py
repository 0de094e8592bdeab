"""What ``synth-nb train`` / ``attach`` print while following a job: one masked line per meaningful update.

Every line is made inert before it is written (``synth_nb.untrusted.inert``): what the backend sends (event
messages, types, errors, tracebacks, metric names, statuses) never reaches the terminal as control
sequences, and a line break inside one value shows as ``\n`` rather than starting a line of its own.

Noise is hidden the way synth-ai 0.2.24's CLI hides it (each flow's ``is_noise``: SFT bookkeeping, RL
"modal"/"hatchet" chatter, prompt-learning internals); the job still records every event. A hidden event that
reports progress (SFT's ``sft.progress``: step of total, loss, tokens/s) becomes one ``progress:`` line at most
every ``PROGRESS_EVERY`` seconds, the last step's always.

Metric lines come in step order: points arrive in pages (newest first, then older ones filled in), so the
newest unprinted point of each metric is printed once per ``metric_every`` seconds, never one older than a
line already printed, and none after the job's final status line (the final block has the last values).
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from synth_nb.cli.final_block import final_block
from synth_nb.flows.chart import number
from synth_nb.job import Job, JobUpdate
from synth_nb.job.describe import format_phase, linked_followed, linked_unfollowable
from synth_nb.job.history import running_loop
from synth_nb.job.progress import progress_of
from synth_nb.records import TERMINAL_STATUSES, UNPARSED_EVENT_TYPE, Event, MetricPoint
from synth_nb.secrets import mask_text
from synth_nb.untrusted import inert, inert_each

if TYPE_CHECKING:
    from synth_nb.job.event_fields import EventFields

__all__ = ["HISTORY_NEWEST", "PROGRESS_EVERY", "LinePrinter", "final_block", "format_event", "format_metric",
           "format_phase", "format_progress"]

#: the event lines an attach prints from a job's history by default (``--all-events``: every one)
HISTORY_NEWEST = 20
#: lines per write when printing a whole history
WRITE_CHUNK = 2000
#: (type, level) pairs whose noise verdict a printer keeps (a backend may send any number of types)
KINDS_KEPT = 1024
_UNKNOWN = object()
#: the shortest time between two ``progress:`` lines (0.2.24's progress line is throttled the same way)
PROGRESS_EVERY = 5.0


def _clock() -> str:
    return time.strftime("%H:%M:%S")


def event_line(seq: int, etype: str, level: str, message: str) -> str:
    """``[seq] type (level): message``: an event's first line."""
    shown_level = f" ({level})" if level and level != "info" else ""
    return f"[{seq}] {etype}{shown_level}: {message}".rstrip().rstrip(":")


def format_event(event: Event) -> list[str]:
    """``[seq] type (level): message`` plus error details and the traceback tail for failures."""
    lines = [event_line(event.seq, event.type, event.level, event.message)]
    if event.type == UNPARSED_EVENT_TYPE:
        raw = json.dumps(event.data.get("raw"), default=str)
        lines.append(f"    as sent: {raw[:300]}{'…' if len(raw) > 300 else ''}")
    if event.is_error:
        detail = event.data.get("detail") or event.data.get("error") or event.data.get("error_detail")
        if detail and str(detail) != event.message:
            lines.append(f"    Error details: {detail}")
        trace = event.data.get("traceback") or event.data.get("stack")
        if isinstance(trace, str):
            lines += [f"    {ln}" for ln in [t for t in trace.splitlines() if t.strip()][-5:]]
    return lines


def format_metric(point: MetricPoint) -> str:
    n = point.data.get("n")
    return f"[metric] {point.name}={point.value:.4f} (step={point.step})" + (f" n={n}" if n is not None else "")


def format_progress(event: Event) -> tuple[str, bool] | None:
    """``progress: 40/192 steps (21%) · loss 2.2240 · 1,976 tokens/s`` for an event that reports work done
    of a total, and whether it is the last step; None for any other event."""
    found = progress_of({}, [event], None)
    if found.done is None or not found.total:
        return None
    parts = [f"progress: {found.label()}"]
    loss = number(event.data.get("loss"))
    if loss is not None:
        parts.append(f"loss {loss:.4f}")
    speed = number(event.data.get("tokens_per_second"))
    if speed is not None:
        parts.append(f"{speed:,.0f} tokens/s")
    return " · ".join(parts), found.done >= found.total


class LinePrinter:
    """Job listener that prints one masked line per meaningful update, one write per update.

    Metric points are thinned to at most one line per metric name every ``metric_every`` seconds (a
    training loss per step would drown the events); the final block repeats the last value of each.
    """

    def __init__(self, job: Job, secrets: Sequence[str], *, prefix: str = "", out: TextIO | None = None,
                 metric_every: float = 1.0) -> None:
        from synth_nb.flows import get_flow

        self.job = job
        self.flow = get_flow(job.flow)
        self.secrets = tuple(s for s in secrets if s)
        self.prefix = prefix
        self.out = out or sys.stdout
        self.metric_every = metric_every
        #: per metric name: when its last line was written, that line's step, the newest point not written yet
        self._metric_printed: dict[str, float] = {}
        self._metric_step: dict[str, int] = {}
        self._pending: dict[str, MetricPoint] = {}
        self._wake_at: asyncio.TimerHandle | None = None
        #: the final status line is written: no metric line after it
        self._ended = False
        self._progress_printed = -math.inf
        self._linked_printers: set[str] = set()
        #: per (type, level): ``Flow.noise_of_kind`` of a line that may be printed from its fields, None: build it
        self._kinds: dict[tuple[str, str], Any] = {}

    def shows(self, event: Event) -> bool:
        """Whether ``event`` gets a line (noise is hidden; what the backend sent unparsed never is)."""
        return event.type == UNPARSED_EVENT_TYPE or not self.flow.is_noise(event)

    def render(self, lines: Sequence[str]) -> str:
        """``lines`` stamped, prefixed and masked, as one text to write."""
        if not lines:
            return ""
        head = f"[{_clock()}] {inert(self.prefix)}"
        return mask_text(head + f"\n{head}".join(inert_each(lines)) + "\n", self.secrets)

    def write(self, lines: Sequence[str]) -> None:
        if lines:
            self.out.write(self.render(lines))
            self.out.flush()

    def emit(self, text: str) -> None:
        """One line (a line break in it, from the backend, is shown as ``\\n``)."""
        self.write([text])

    def __call__(self, update: JobUpdate) -> None:
        if update.kind == "metric":
            if update.metric is not None:
                self._metric(update.metric)
            return
        self._flush_metrics(everything=update.kind == "status")
        if update.kind == "status":
            self.emit(f"status={update.status}")
            self._ended = self._ended or update.status in TERMINAL_STATUSES
        elif update.kind == "event" and update.event is not None:
            if self.shows(update.event):
                self.write(format_event(update.event))
            else:
                self._progress(update.event)
        elif update.kind == "phase" and update.entry is not None:
            self.emit(format_phase(update.entry))
        elif update.kind == "linked" and update.entry is not None:
            self._print_linked(update.entry)

    def _progress(self, event: Event) -> None:
        """A hidden event that reports progress: one line, at most every ``PROGRESS_EVERY`` seconds."""
        found = format_progress(event)
        if found is None:
            return
        line, last = found
        now = time.monotonic()
        if last or now - self._progress_printed >= PROGRESS_EVERY:
            self._progress_printed = now
            self.emit(line)

    def _metric(self, point: MetricPoint) -> None:
        """Keep the newest point of its metric (one older than a line already written is not written)."""
        if self._ended or point.step <= self._metric_step.get(point.name, -math.inf):
            return
        pending = self._pending.get(point.name)
        if pending is None or point.step >= pending.step:
            self._pending[point.name] = point
        self._wake(0.0)  # once the page being read is in: its newest point is the one written

    def _wake(self, delay: float) -> None:
        """Write the due metric lines in ``delay`` seconds (without an event loop: now, or at the next update)."""
        loop = running_loop()
        if loop is None:
            if delay <= 0:
                self._flush_metrics()
            return
        if self._wake_at is not None:
            if self._wake_at.when() <= loop.time() + delay:
                return
            self._wake_at.cancel()
        self._wake_at = loop.call_later(delay, self._woken)

    def _woken(self) -> None:
        self._wake_at = None
        self._flush_metrics()

    def _flush_metrics(self, *, everything: bool = False) -> None:
        """Write the pending points that are due (``everything``: all of them), in step order."""
        if not self._pending:
            return
        now = time.monotonic()
        due = [p for name, p in self._pending.items()
               if everything or now - self._metric_printed.get(name, -math.inf) >= self.metric_every]
        for point in due:
            del self._pending[point.name]
            self._metric_printed[point.name], self._metric_step[point.name] = now, point.step
        self.write([format_metric(p) for p in sorted(due, key=lambda p: p.step)])
        if self._pending:
            first = min(self._metric_printed.get(name, now) for name in self._pending)
            self._wake(max(0.01, first + self.metric_every - now))

    def history(self, *, all_events: bool = False, newest: int = HISTORY_NEWEST) -> None:
        """What an attached job already has: its status and phases, then its newest ``newest`` event lines
        after a note of how many events came earlier, or with ``all_events`` every line, written
        ``WRITE_CHUNK`` at a time (a million-event job printed line by line spent most of its attach
        writing); last, the job its status links to."""
        job = self.job
        if not job.events and not job.metrics and not job.timeline and job.linked_note is None:
            return
        self.emit(f"status={job.status}")
        self.write([format_phase(entry) for entry in job.timeline])
        if all_events:
            chunk: list[str] = []
            for fields, text in job.events.field_chunks():
                chunk += self._chunk_lines(fields, text)
                if len(chunk) >= WRITE_CHUNK:
                    self.write(chunk)
                    chunk = []
            self.write(chunk)
        else:
            earlier, picked = self._newest(newest)
            lines = [f"… {earlier:,} earlier events; --all-events to print every one"] if earlier else []
            for event in picked:
                lines += format_event(event)
            self.write(lines)
        if job.linked_note is not None:
            self._print_linked(job.linked_note)

    def _chunk_lines(self, chunk: list[EventFields], text: bytes | bytearray | None) -> list[str]:
        """``_lines_of`` each event of a chunk; when the chunk's JSON text (``EventLog.field_chunks``) holds no
        noise word, an event whose kind leaves it to the words gets its one line at once (``Flow.noise_absent``)."""
        if text is None or not self.flow.noise_absent(text):
            return [line for fields in chunk for line in self._lines_of(fields)]
        kinds, lines = self._kinds, []
        for fields in chunk:
            kind = kinds.get((fields.type, fields.level), _UNKNOWN)
            if kind is None or kind is _UNKNOWN:  # built, or its kind not known yet
                lines += self._lines_of(fields)
            elif kind is not True:  # False, or the noise words, none of which is in this chunk
                lines.append(event_line(fields.seq, fields.type, fields.level, fields.message))
        return lines

    def _lines_of(self, fields: EventFields) -> list[str]:
        """``format_event`` of the event with these fields if it ``shows``; the event is built only when its
        fields cannot tell (an error, an unparsed event, a noise word in its data): the flow's verdict on the
        type and level is kept per pair (``Flow.noise_of_kind``), its noise words looked for only when they
        decide (``Flow.noise_in_text``)."""
        pair = (fields.type, fields.level)
        kind = self._kinds.get(pair, _UNKNOWN)
        if kind is _UNKNOWN:
            plain = fields.type != UNPARSED_EVENT_TYPE and not (fields.level.lower() == "error"  # ``Event.is_error``
                                                                or fields.type.endswith(".failed"))
            kind = self.flow.noise_of_kind(*pair) if plain else None
            if len(self._kinds) < KINDS_KEPT:
                self._kinds[pair] = kind
        if kind is not None:
            noise = self.flow.noise_in_text(fields.type, fields.message, bytes(fields.data_json)) \
                if not isinstance(kind, bool) else kind
            if noise is not None:
                return [] if noise else self._plain_lines(fields)
        event = Event(seq=fields.seq, type=fields.type, level=fields.level, message=fields.message,
                      data=fields.data())
        return format_event(event) if self.shows(event) else []

    @staticmethod
    def _plain_lines(fields: EventFields) -> list[str]:
        """``format_event`` of an event that is neither an error nor unparsed: its one line."""
        return [event_line(fields.seq, fields.type, fields.level, fields.message)]

    def _newest(self, count: int) -> tuple[int, list[Event]]:
        """The newest ``count`` events that get a line, and how many events (of any kind) precede them;
        reads back from the end only as far as needed."""
        events = self.job.events
        picked: list[Event] = []
        end = first = len(events)
        while end > 0 and len(picked) < count:
            start = max(0, end - 4 * count)
            window = events[start:end]
            for offset in range(len(window) - 1, -1, -1):
                if self.shows(window[offset]):
                    picked.append(window[offset])
                    first = start + offset
                    if len(picked) == count:
                        break
            end = start
        picked.reverse()
        return first, picked

    def _print_linked(self, entry: dict[str, Any]) -> None:
        """Say which job the status links to, then print its lines too, each prefixed with its id."""
        linked = self.job.linked
        if linked is None or linked.id != entry.get("job_id"):
            self.emit(f"linked job {linked_unfollowable(entry)}")
            return
        self.emit(linked_followed(linked, "synth-nb attach", marked="its lines are marked with its id"))
        if linked.id in self._linked_printers:
            return
        self._linked_printers.add(linked.id)
        printer = LinePrinter(linked, self.secrets, prefix=f"{self.prefix}{linked.id} ", out=self.out,
                              metric_every=self.metric_every)
        printer.history()
        linked.add_listener(printer)
