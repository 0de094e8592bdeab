"""Jobs submitted from a folder, remembered in ``.synth_nb/jobs.json`` so they can be re-attached.

Writes are atomic (temp file + ``os.replace``) so a crash or a second kernel never leaves half a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from synth_nb.errors import ConfigError, SynthNbError

__all__ = ["RUNS_DIR", "JobRecord", "JobRegistry", "config_hash", "short_reason"]

REGISTRY_DIR = ".synth_nb"
REGISTRY_FILE = "jobs.json"
#: where the files of a job submitted from a folder go when its config names no results folder:
#: ``<folder>/.synth_nb/runs/<job id>/``
RUNS_DIR = Path(REGISTRY_DIR) / "runs"


@dataclass
class JobRecord:
    job_id: str
    flow: str
    backend_url: str
    config_hash: str = ""
    submitted_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    last_seq: int = 0
    algorithm: str | None = None
    config_path: str | None = None
    status: str | None = None
    #: where the job's result files go (the config's ``results_folder``), for exports after re-attaching
    results_folder: str | None = None
    #: sent to the embedded backend: its data folder keeps the job when the process restarts on another port
    embedded: bool = False
    #: why it stopped, in one line (``synth_nb.job.ending``), once it ended and was followed or listed
    stop_reason: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobRecord:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def short_reason(text: str) -> str:
    """A stop reason's first clause, for a table cell ("stopped by --max-rollouts 60: 64 rollouts (limit 60)");
    the rest (what the backend kept, the cancel) is in the final block, ``summary.md`` and ``run.json``."""
    return text.split("; ", 1)[0]


def config_hash(path: str | Path | None, fallback: str = "") -> str:
    """sha256 (first 16 hex) of the config file, or of ``fallback`` text when there is no file."""
    data = b""
    if path is not None:
        try:
            data = Path(path).read_bytes()
        except OSError:
            data = b""
    if not data:
        data = fallback.encode()
    return hashlib.sha256(data).hexdigest()[:16]


class JobRegistry:
    """``<folder>/.synth_nb/jobs.json``: record, update, get and list submitted jobs."""

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = Path(folder) if folder is not None else Path.cwd()
        self.path = self.folder / REGISTRY_DIR / REGISTRY_FILE

    def _load(self) -> list[JobRecord]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"job registry is not valid JSON: {exc.msg}", path=self.path, line=exc.lineno,
                hint="delete the file to start a fresh registry",
            ) from None
        items = data.get("jobs", []) if isinstance(data, dict) else []
        return [JobRecord.from_dict(item) for item in items if isinstance(item, dict) and item.get("job_id")]

    def _save(self, records: list[JobRecord]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"version": 1, "jobs": [asdict(r) for r in records]}, indent=2)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".jobs-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(payload + "\n")
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def record(self, record: JobRecord) -> JobRecord:
        """Add (or replace) the entry for ``record.job_id``.

        The job exists on its backend by now: when it cannot be recorded (a read-only folder), the error says
        its id and how to reach it, so it is not lost."""
        records = [r for r in self._load() if r.job_id != record.job_id]
        records.append(record)
        try:
            self._save(records)
        except OSError as exc:
            where = f" --backend {record.backend_url}"
            raise SynthNbError(
                f"job {record.job_id} was created on {record.backend_url}, but it could not be recorded in "
                f"{self.path} ({exc.strerror or exc}); it runs on. Follow it with: synth-nb attach {record.job_id}"
                f"{where}; cancel it with: synth-nb cancel {record.job_id}{where}") from None
        return record

    def update(self, job_id: str, **changes: Any) -> JobRecord | None:
        records = self._load()
        for record in records:
            if record.job_id == job_id:
                for key, value in changes.items():
                    setattr(record, key, value)
                self._save(records)
                return record
        return None

    def get(self, job_id: str) -> JobRecord | None:
        return next((r for r in self._load() if r.job_id == job_id), None)

    def folder_of(self, job_id: str) -> Path | None:
        """Where a job submitted from this folder keeps its files (its bundle, its result files), as
        ``<this>/<job id>/``: the results folder its config named, else ``.synth_nb/runs``. None for a job not
        submitted from here: its folder is not known."""
        record = self.get(job_id)
        if record is None:
            return None
        return Path(record.results_folder) if record.results_folder else self.folder / RUNS_DIR

    def list(self) -> list[JobRecord]:
        """Newest submission first."""
        return sorted(self._load(), key=lambda r: r.submitted_at, reverse=True)
