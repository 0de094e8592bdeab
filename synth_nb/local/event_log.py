"""The events table written with group commit, and read back as the JSON text it was stored as.

A job's seq is assigned when the event is appended (one short lock, no I/O), and the rows are committed
in one transaction per batch by a writer thread, or by whichever caller needs the table current first.
One transaction per event capped a backend at about 10k events/s for one writer (6k/s with 20); a batch
costs little more than one event. Each event is stored with its served form (``record``, compact JSON),
so history pages are joined from stored text instead of parsed and re-encoded, and the newest committed
events of recently written jobs are also kept as ready SSE frames (``Tail``), so live followers read
neither SQLite nor the storage lock.

Lock order: the storage lock, then this log's own (``append`` of a known job takes only the latter).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, NamedTuple

from synth_nb.local.lifecycle import utc_now
from synth_nb.local.records import event_record

__all__ = ["EventLog", "StoredEvent", "join_records", "sse_frame"]

log = logging.getLogger(__name__)

#: (seq, type, record): an event as served, without parsing it
StoredEvent = tuple[int, str, str]
#: committed events kept as SSE frames per job, and jobs kept
TAIL_EVENTS = 2048
TAIL_JOBS = 32


class _Pending(NamedTuple):
    job_id: str
    seq: int
    type: str
    level: str
    message: str
    data: str
    created_at: str
    record: str


def _legacy_record(job_id: str, row: sqlite3.Row) -> str:
    """The served JSON of a row written before events kept their record."""
    return event_record(job_id, row["seq"], row["type"], row["level"], row["message"],
                        json.dumps(json.loads(row["data"]), separators=(",", ":")), row["created_at"])


def sse_frame(seq: int, type: str, record: str) -> str:
    """One Server-Sent Event: id, type and the event's JSON on one ``data:`` line (JSON escapes newlines)."""
    return f"id: {seq}\nevent: {type}\ndata: {record}\n\n"


def join_records(events: list[StoredEvent]) -> str:
    """A JSON array of stored events, without parsing them."""
    return "[" + ",".join(record for _, _, record in events) + "]"


class _Tail:
    """A job's newest committed events as SSE frames; their seqs are contiguous from ``first``."""

    def __init__(self, first: int) -> None:
        self.first = first
        self.frames: list[str] = []

    def extend(self, frames: list[str]) -> None:
        self.frames += frames
        if len(self.frames) > 2 * TAIL_EVENTS:
            drop = len(self.frames) - TAIL_EVENTS
            del self.frames[:drop]
            self.first += drop


class EventLog:
    """Pending events, the writer thread that commits them and the tails of recently written jobs."""

    def __init__(self, db: sqlite3.Connection, db_lock: Callable[[], AbstractContextManager[Any]],
                 notify: Callable[[str], None]) -> None:
        self._db = db
        self._db_lock = db_lock
        self._notify = notify
        self._lock = threading.Condition(threading.Lock())
        self._pending: list[_Pending] = []
        self._next_seq: dict[str, int] = {}
        self._tails: OrderedDict[str, _Tail] = OrderedDict()
        self._closed = False
        self._writer = threading.Thread(target=self._write_forever, name="synth-nb-event-writer", daemon=True)
        self._writer.start()

    def append(self, job_id: str, type: str, level: str, message: str, payload: str) -> int:
        """Queue an event; returns its seq. ``payload`` is the data as JSON text; ``KeyError`` for no such job."""
        while True:
            with self._lock:
                seq = self._next_seq.get(job_id)
                if seq is not None:
                    self._next_seq[job_id] = seq + 1
                    created_at = utc_now()
                    self._pending.append(_Pending(job_id, seq, type, level, message, payload, created_at,
                                                  event_record(job_id, seq, type, level, message, payload, created_at)))
                    if len(self._pending) == 1:
                        self._lock.notify()
                    return seq
            with self._db_lock():
                row = self._db.execute("SELECT last_seq FROM jobs WHERE id=?", (job_id,)).fetchone()
                if row is None:
                    raise KeyError(job_id)
                with self._lock:
                    self._next_seq.setdefault(job_id, int(row[0]) + 1)

    def flush(self) -> None:
        """Commit every pending event in one transaction (call under the storage lock); then wake readers."""
        with self._lock:
            rows, self._pending = self._pending, []
        if not rows:
            return
        last: dict[str, int] = {}
        for row in rows:
            last[row.job_id] = row.seq
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT INTO events (job_id, seq, type, level, message, data, created_at, record)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self._db.executemany("UPDATE jobs SET last_seq=? WHERE id=?", [(seq, job) for job, seq in last.items()])
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            with self._lock:  # those seqs were never visible: start again from what is committed
                self._pending = [row for row in self._pending if row.job_id not in last]
                for job_id in last:
                    self._next_seq.pop(job_id, None)
            raise
        self._remember(rows)
        for job_id in last:
            self._notify(job_id)

    def _remember(self, rows: list[_Pending]) -> None:
        """Add committed rows to their jobs' tails (the least recently written job's tail goes first)."""
        by_job: dict[str, tuple[int, list[str]]] = {}
        for row in rows:
            by_job.setdefault(row.job_id, (row.seq, []))[1].append(sse_frame(row.seq, row.type, row.record))
        with self._lock:
            for job_id, (first, frames) in by_job.items():
                tail = self._tails.get(job_id)
                if tail is None or tail.first + len(tail.frames) != first:
                    tail = self._tails[job_id] = _Tail(first)
                self._tails.move_to_end(job_id)
                tail.extend(frames)
            while len(self._tails) > TAIL_JOBS:
                self._tails.popitem(last=False)

    def tail_frames(self, job_id: str, since_seq: int, limit: int) -> tuple[int, str] | None:
        """``(last seq, SSE frames)`` of committed events after ``since_seq`` when the tail holds them all."""
        with self._lock:
            tail = self._tails.get(job_id)
            if tail is None or since_seq + 1 < tail.first:
                return None
            start = since_seq + 1 - tail.first
            frames = tail.frames[start:start + limit]
            return since_seq + len(frames), "".join(frames)

    def _write_forever(self) -> None:
        while True:
            with self._lock:
                while not self._pending and not self._closed:
                    self._lock.wait()
                if self._closed:
                    return
            try:
                with self._db_lock():
                    self.flush()
            except Exception:  # a full disk or a closed database: the events of that batch are lost
                log.exception("could not write a batch of job events")

    def close(self) -> None:
        """Stop the writer thread; the caller flushes what is left."""
        with self._lock:
            self._closed = True
            self._lock.notify()
        self._writer.join(timeout=10)

    def read(self, job_id: str, since_seq: int, limit: int) -> list[StoredEvent]:
        """Committed events with ``seq > since_seq``, ascending, at most ``limit`` (call under the storage lock).

        Only seq, type and record are fetched, as plain tuples: the other columns are the bulk of a row.
        """
        cursor = self._db.cursor()
        cursor.row_factory = None
        records: list[StoredEvent] = cursor.execute(
            "SELECT seq, type, record FROM events WHERE job_id=? AND seq>? ORDER BY seq LIMIT ?",
            (job_id, since_seq, limit)).fetchall()
        if all(record is not None for _, _, record in records):
            return records
        rows = self._db.execute(
            "SELECT seq, type, record, level, message, data, created_at FROM events"
            " WHERE job_id=? AND seq>? ORDER BY seq LIMIT ?", (job_id, since_seq, limit)).fetchall()
        return [(row["seq"], row["type"], row["record"] or _legacy_record(job_id, row)) for row in rows]
