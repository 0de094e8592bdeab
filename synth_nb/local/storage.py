"""SQLite (WAL) storage for the local backend: jobs, events, metrics and uploaded files.

One connection guarded by a lock: executors write from worker threads while the HTTP handlers read.
Events get a per-job monotonic ``seq`` and are committed in batches (``event_log``): every other access
first commits what is pending, so a reader sees every event appended before it, and a status change
never overtakes the events before it. ``jobs.last_seq`` moves in the same transaction as the events, so
a seq that anyone has seen is never reused, even across restarts. Events and metric points are stored
with their served JSON (``records``), so a history page costs the rows it fetches.

Job bodies arrive here with their secrets already masked (``redact.withhold_secrets``); bodies stored by
an older version are masked when the database is opened. The database and uploads are readable by their
owner only (0600), and deleted rows are overwritten (``secure_delete``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from synth_nb.local.errors import StoreClosed
from synth_nb.local.event_log import EventLog, StoredEvent, sse_frame
from synth_nb.local.lifecycle import TERMINAL, lifecycle_event, utc_now
from synth_nb.local.records import metric_record, to_json
from synth_nb.local.redact import withhold_secrets

__all__ = ["JobRecord", "Storage", "StoredEvent", "to_json"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL, executor TEXT NOT NULL,
    body TEXT NOT NULL, result TEXT NOT NULL DEFAULT '{}', timeline TEXT NOT NULL DEFAULT '[]',
    error TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, started_at TEXT, finished_at TEXT,
    last_seq INTEGER NOT NULL DEFAULT 0, idempotency_key TEXT, cancel_requested INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_idempotency ON jobs(kind, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS events (
    job_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, level TEXT NOT NULL,
    message TEXT NOT NULL, data TEXT NOT NULL, created_at TEXT NOT NULL, record TEXT, PRIMARY KEY (job_id, seq)
);
CREATE TABLE IF NOT EXISTS metrics (
    id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, name TEXT NOT NULL, step INTEGER NOT NULL,
    value REAL NOT NULL, data TEXT NOT NULL, created_at TEXT NOT NULL, record TEXT, UNIQUE (job_id, name, step)
);
CREATE INDEX IF NOT EXISTS metrics_job ON metrics(job_id, id);
CREATE INDEX IF NOT EXISTS metrics_job_step ON metrics(job_id, step, id);
CREATE TABLE IF NOT EXISTS files (
    id TEXT PRIMARY KEY, filename TEXT NOT NULL, purpose TEXT NOT NULL, bytes INTEGER NOT NULL,
    stored_name TEXT NOT NULL, created_at TEXT NOT NULL, idempotency_key TEXT
);
"""
#: added after the first release; databases created before get the column when opened
_FILES_IDEMPOTENCY = """
CREATE UNIQUE INDEX IF NOT EXISTS files_idempotency ON files(idempotency_key) WHERE idempotency_key IS NOT NULL;
"""
#: mode of the database and uploads: they may hold private data
PRIVATE = 0o600


@dataclass(frozen=True)
class JobRecord:
    id: str
    kind: str
    status: str
    executor: str
    body: dict[str, Any]
    result: dict[str, Any]
    timeline: list[dict[str, Any]]
    error: str | None
    created_at: str
    updated_at: str
    started_at: str | None
    finished_at: str | None
    last_seq: int
    cancel_requested: bool

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


def _job(row: sqlite3.Row) -> JobRecord:
    return JobRecord(
        id=row["id"], kind=row["kind"], status=row["status"], executor=row["executor"],
        body=json.loads(row["body"]), result=json.loads(row["result"]), timeline=json.loads(row["timeline"]),
        error=row["error"], created_at=row["created_at"], updated_at=row["updated_at"],
        started_at=row["started_at"], finished_at=row["finished_at"], last_seq=row["last_seq"],
        cancel_requested=bool(row["cancel_requested"]),
    )


def _private_file(path: Path) -> None:
    """Create ``path`` readable by its owner only (or make an existing one so)."""
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, PRIVATE))
    os.chmod(path, PRIVATE)


def _lock_folder(data_dir: Path) -> IO[str] | None:
    """Hold an exclusive lock on the data dir: a second live server would fail the first one's jobs."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    handle = open(data_dir / "backend.lock", "w")  # noqa: SIM115 - held for the server's lifetime
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise RuntimeError(f"another local backend is already using {data_dir}; stop it or pick another "
                           "--data-dir") from None
    return handle


class Storage:
    """Thread-safe persistence; ``on_event(job_id)`` is called after each committed event or status change."""

    def __init__(self, data_dir: Path, on_change: Callable[[str], None] | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.files_dir = self.data_dir / "files"
        self.jobs_dir = self.data_dir / "jobs"
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.files_dir.mkdir(mode=0o700, exist_ok=True)
        self.jobs_dir.mkdir(mode=0o700, exist_ok=True)
        self._folder_lock = _lock_folder(self.data_dir)
        self._lock = threading.RLock()
        self._closed = False
        database = self.data_dir / "backend.sqlite3"
        for path in (database, database.with_name(database.name + "-wal"), database.with_name(database.name + "-shm")):
            if path == database or path.exists():  # SQLite gives the -wal/-shm files it creates the database's mode
                _private_file(path)
        self._db = sqlite3.connect(database, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA secure_delete=ON")
        self._db.executescript(_SCHEMA)
        self._migrate()
        self.on_change = on_change
        self._events = EventLog(self._db, self._locked, self._notify)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """The database, with every pending event committed first; ``StoreClosed`` once ``close`` ran (a job's
        worker may outlive the backend's wait for it)."""
        with self._lock:
            if self._closed:
                raise StoreClosed("the backend's job store is closed: the backend stopped")
            self._events.flush()
            yield

    def _migrate(self) -> None:
        """Bring a database written by an older version up to date: file idempotency, no secret in a body."""
        columns = {row["name"] for row in self._db.execute("PRAGMA table_info(files)")}
        if "idempotency_key" not in columns:
            self._db.execute("ALTER TABLE files ADD COLUMN idempotency_key TEXT")
        for table in ("events", "metrics"):
            if "record" not in {row["name"] for row in self._db.execute(f"PRAGMA table_info({table})")}:
                self._db.execute(f"ALTER TABLE {table} ADD COLUMN record TEXT")
        self._db.executescript(_FILES_IDEMPOTENCY)
        masked = 0
        for row in self._db.execute("SELECT id, body FROM jobs").fetchall():
            public, withheld = withhold_secrets(json.loads(row["body"]))
            if withheld:
                self._db.execute("UPDATE jobs SET body=? WHERE id=?", (to_json(public), row["id"]))
                masked += 1
        if masked:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        if self._closed:
            return
        self._events.close()
        with self._locked():
            self._db.close()
            self._closed = True
        if self._folder_lock is not None:
            self._folder_lock.close()
            self._folder_lock = None

    def _notify(self, job_id: str) -> None:
        if self.on_change is not None:
            self.on_change(job_id)

    # ---- jobs -----------------------------------------------------------------------------------
    def create_job(self, job_id: str, kind: str, executor: str, body: dict[str, Any],
                   idempotency_key: str | None = None) -> tuple[JobRecord, bool]:
        """Insert a queued job (plus its creation event); returns ``(job, created)``.

        With an ``idempotency_key`` already used for this kind, the existing job is returned instead.
        """
        now = utc_now()
        with self._locked():
            if idempotency_key:
                row = self._db.execute("SELECT * FROM jobs WHERE kind=? AND idempotency_key=?",
                                       (kind, idempotency_key)).fetchone()
                if row is not None:
                    return _job(row), False
            self._db.execute(
                "INSERT INTO jobs (id, kind, status, executor, body, timeline, created_at, updated_at,"
                " idempotency_key) VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?)",
                (job_id, kind, executor, to_json(body), json.dumps([{"phase": "queued", "created_at": now}]),
                 now, now, idempotency_key),
            )
            self.add_event(job_id, lifecycle_event(kind, "created"), f"{kind} job created",
                           {"executor": executor})
            job = self.get_job(job_id)
        assert job is not None
        return job, True

    def get_job(self, job_id: str) -> JobRecord | None:
        with self._locked():
            row = self._db.execute("SELECT * FROM jobs WHERE id=?", (job_id,)).fetchone()
        return _job(row) if row is not None else None

    def list_jobs(self, kind: str | None = None, status: str | None = None, limit: int = 100) -> list[JobRecord]:
        sql, args = "SELECT * FROM jobs WHERE 1=1", list[str]()
        if kind:
            sql, args = sql + " AND kind=?", [*args, kind]
        if status:
            sql, args = sql + " AND status=?", [*args, status]
        with self._locked():
            rows = self._db.execute(sql + " ORDER BY created_at DESC LIMIT ?", (*args, limit)).fetchall()
        return [_job(r) for r in rows]

    def set_status(self, job_id: str, status: str, *, error: str | None = None,
                   expect: frozenset[str] | None = None) -> bool:
        """Move a job to ``status`` (only from a status in ``expect`` if given); bumps ``updated_at``."""
        now = utc_now()
        with self._locked():
            job = self.get_job(job_id)
            if job is None or (expect is not None and job.status not in expect):
                return False
            timeline = [*job.timeline, {"phase": status, "created_at": now}]
            self._db.execute(
                "UPDATE jobs SET status=?, updated_at=?, timeline=?, error=COALESCE(?, error),"
                " started_at=CASE WHEN ?='running' THEN ? ELSE started_at END,"
                " finished_at=CASE WHEN ? IN ('succeeded','failed','cancelled') THEN COALESCE(finished_at, ?)"
                " ELSE finished_at END"
                " WHERE id=?",
                (status, now, json.dumps(timeline), error, status, now, status, now, job_id),
            )
        self._notify(job_id)
        return True

    def mark_finished(self, job_id: str) -> None:
        """Fill ``finished_at`` of a job about to end (kept when its status then becomes terminal): clients
        that stop at its terminal event print the status document they read before the status changed."""
        with self._locked():
            self._db.execute("UPDATE jobs SET finished_at=COALESCE(finished_at, ?) WHERE id=?", (utc_now(), job_id))

    def request_cancel(self, job_id: str) -> None:
        with self._locked():
            self._db.execute("UPDATE jobs SET cancel_requested=1 WHERE id=?", (job_id,))

    def merge_result(self, job_id: str, fields: dict[str, Any]) -> None:
        with self._locked():
            job = self.get_job(job_id)
            if job is None:
                return
            merged = {**job.result, **fields}
            self._db.execute("UPDATE jobs SET result=? WHERE id=?", (to_json(merged), job_id))

    def fail_interrupted(self) -> list[str]:
        """Mark jobs that were running when the server stopped as failed, with an event saying why."""
        with self._locked():
            rows = self._db.execute("SELECT id, kind FROM jobs WHERE status='running'").fetchall()
        reason = ("The local backend stopped while this job was running; its history is kept but the run "
                  "cannot continue. Submit the job again.")
        for row in rows:
            self.add_event(row["id"], lifecycle_event(row["kind"], "failed"), reason,
                           {"error": "backend_restarted"}, level="error")
            self.set_status(row["id"], "failed", error=reason)
        return [r["id"] for r in rows]

    # ---- events & metrics -----------------------------------------------------------------------
    def add_event(self, job_id: str, type: str, message: str = "", data: dict[str, Any] | None = None,
                  level: str = "info") -> int:
        """Append an event; returns its seq. An empty message is replaced by the type (never empty)."""
        return self.add_event_json(job_id, type, message, to_json(data or {}), level)

    def add_event_json(self, job_id: str, type: str, message: str, payload: str, level: str = "info") -> int:
        """``add_event`` with the data already serialised (``to_json``)."""
        return self._events.append(job_id, type, level or "info", message or type, payload)

    def event_records(self, job_id: str, since_seq: int = 0, limit: int = 200) -> list[StoredEvent]:
        """Events with ``seq > since_seq``, ascending, at most ``limit``, as ``(seq, type, JSON text)``."""
        with self._locked():
            return self._events.read(job_id, since_seq, limit)

    def sse_frames(self, job_id: str, since_seq: int, limit: int) -> tuple[int, str]:
        """``(last seq, SSE frames)`` of the committed events after ``since_seq`` (``since_seq, ""`` for none).

        Live followers are served from memory; only one behind the newest couple of thousand events reads
        the database.
        """
        found = self._events.tail_frames(job_id, since_seq, limit)
        if found is not None:
            return found
        batch = self.event_records(job_id, since_seq, limit)
        return (batch[-1][0] if batch else since_seq), "".join(sse_frame(*event) for event in batch)

    def events(self, job_id: str, since_seq: int = 0, limit: int = 200) -> list[dict[str, Any]]:
        """Events with ``seq > since_seq``, ascending, at most ``limit``."""
        return [json.loads(record) for _, _, record in self.event_records(job_id, since_seq, limit)]

    def add_metric(self, job_id: str, name: str, step: int, value: float,
                   data: dict[str, Any] | None = None) -> None:
        """Append a metric point; a repeated ``(name, step)`` replaces the earlier value."""
        row = (job_id, name, int(step), float(value), to_json(data or {}), utc_now())
        with self._locked():
            self._db.execute(
                "INSERT OR REPLACE INTO metrics (job_id, name, step, value, data, created_at, record)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)", (*row, metric_record(*row)))
        self._notify(job_id)

    def metrics_json(self, job_id: str, *, limit: int = 200, after_step: int | None = None,
                     name: str | None = None) -> str:
        """The stored records as a JSON array, ascending: with ``after_step`` the oldest ``limit`` points past
        it (paged by ``(step, id)`` on an index), else the newest ``limit``."""
        sql = "SELECT record, id FROM metrics WHERE job_id=?" + (" AND name=?" if name else "")
        args: list[Any] = [job_id, *([name] if name else [])]
        sql += " AND step>? ORDER BY step, id LIMIT ?" if after_step is not None else " ORDER BY id DESC LIMIT ?"
        args += [after_step, limit] if after_step is not None else [limit]
        with self._locked():
            cursor = self._db.cursor()
            cursor.row_factory = None
            rows = cursor.execute(sql, args).fetchall()
            missing = [row_id for record, row_id in rows if record is None]  # written before records were kept
            legacy = {row[0]: metric_record(job_id, *row[1:]) for row in cursor.execute(
                "SELECT id, name, step, value, data, created_at FROM metrics WHERE id IN"
                f" ({','.join('?' * len(missing))})", missing)} if missing else {}
        if after_step is None:
            rows.reverse()
        return "[" + ",".join(record or legacy[row_id] for record, row_id in rows) + "]"

    # ---- files ----------------------------------------------------------------------------------
    def add_file(self, file_id: str, filename: str, purpose: str, size: int, stored_name: str,
                 idempotency_key: str | None = None) -> tuple[dict[str, Any], bool]:
        """Record an upload; returns ``(file, created)``: the earlier file when ``idempotency_key`` was used."""
        with self._locked():
            earlier = self.file_for_key(idempotency_key)
            if earlier is not None:
                return earlier, False
            self._db.execute(
                "INSERT INTO files (id, filename, purpose, bytes, stored_name, created_at, idempotency_key)"
                " VALUES (?,?,?,?,?,?,?)",
                (file_id, filename, purpose, size, stored_name, utc_now(), idempotency_key),
            )
            found = self.get_file(file_id)
        assert found is not None
        return found, True

    def file_for_key(self, idempotency_key: str | None) -> dict[str, Any] | None:
        """The file first uploaded with ``idempotency_key``, if any."""
        if not idempotency_key:
            return None
        with self._locked():
            row = self._db.execute("SELECT * FROM files WHERE idempotency_key=?", (idempotency_key,)).fetchone()
        return dict(row) if row is not None else None

    def open_upload(self, stored_name: str) -> IO[bytes]:
        """A new file under ``files/`` for an upload's bytes, readable by the owner only."""
        fd = os.open(self.files_dir / stored_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE)
        return os.fdopen(fd, "wb")

    def get_file(self, file_id: str) -> dict[str, Any] | None:
        with self._locked():
            row = self._db.execute("SELECT * FROM files WHERE id=?", (file_id,)).fetchone()
        return dict(row) if row is not None else None

    def list_files(self, purpose: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        sql, args = "SELECT * FROM files", list[str]()
        if purpose:
            sql, args = sql + " WHERE purpose=?", [purpose]
        with self._locked():
            rows = self._db.execute(sql + " ORDER BY created_at DESC LIMIT ?", (*args, limit)).fetchall()
        return [dict(r) for r in rows]

    def delete_file(self, file_id: str) -> bool:
        found = self.get_file(file_id)
        if found is None:
            return False
        with self._locked():
            self._db.execute("DELETE FROM files WHERE id=?", (file_id,))
        (self.files_dir / found["stored_name"]).unlink(missing_ok=True)
        return True

    def file_path(self, file_id: str) -> Path:
        found = self.get_file(file_id)
        if found is None:
            raise KeyError(file_id)
        return self.files_dir / found["stored_name"]
