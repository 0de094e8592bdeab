"""Save a job's stream as JSONL (``{"t", "kind", "payload"}`` per line) and read it back.

``t`` is seconds since the recording started, so the replay executor can re-emit with the original timing.
Payloads are masked on the way in (secret-named keys and every known secret value), so a recording can be
shared or committed as a fixture.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from pydantic import SecretStr

from synth_nb.errors import ConfigError
from synth_nb.job.history import JobUpdate
from synth_nb.job.view import JobView
from synth_nb.plan import mask_payload
from synth_nb.secrets._mask import mask_text

__all__ = ["RECORD_KINDS", "Recorder", "read_recording"]

RECORD_KINDS = ("meta", "status", "event", "metric")


class Recorder:
    """Append-only JSONL writer; use as a context manager or call ``close()``."""

    def __init__(self, path: str | Path, *, secrets: Sequence[str | SecretStr] = ()) -> None:
        self.path = Path(path)
        self._secrets = [s.get_secret_value() if isinstance(s, SecretStr) else str(s) for s in secrets if s]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: IO[str] | None = self.path.open("w", encoding="utf-8")
        self._start = time.monotonic()
        self.count = 0
        self._job: JobView | None = None

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def write(self, kind: str, payload: dict[str, Any]) -> None:
        if kind not in RECORD_KINDS:
            raise ConfigError(f"unknown recording kind {kind!r}; expected one of {', '.join(RECORD_KINDS)}",
                              path=self.path)
        if self._handle is None:
            return
        safe = mask_payload(payload, self._secrets)
        line = json.dumps({"t": round(time.monotonic() - self._start, 4), "kind": kind, "payload": safe},
                          ensure_ascii=False, default=str)
        self._handle.write(mask_text(line, tuple(self._secrets)) + "\n")
        self._handle.flush()
        self.count += 1

    def follow(self, job: JobView) -> None:
        """Record ``job``'s meta, what it already holds, and every status/event/metric from here on."""
        self.write("meta", {"job_id": job.id, "flow": job.flow, "algorithm": job.algorithm,
                            "backend_url": job.backend_url})
        self._job = job
        if job.events or job.metrics:  # a re-attached job: its history first
            self.write("status", {**(job.status_doc or {}), "status": job.status})
            for event in job.events:
                self.write("event", event.model_dump(mode="json"))
            for point in job.metrics:
                self.write("metric", point.model_dump(mode="json"))
        job.add_listener(self._on_update)

    def _on_update(self, update: JobUpdate) -> None:
        if update.kind == "status":
            doc = dict(self._job.status_doc if self._job is not None else {})
            self.write("status", {**doc, "status": update.status})
        elif update.kind == "event" and update.event is not None:
            self.write("event", update.event.model_dump(mode="json"))
        elif update.kind == "metric" and update.metric is not None:
            self.write("metric", update.metric.model_dump(mode="json"))
        elif update.kind == "done":
            self.close()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def read_recording(path: str | Path) -> list[dict[str, Any]]:
    """Parse a recording; a bad line raises ``ConfigError`` naming the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read recording: {exc.strerror or exc}", path=path) from None
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"invalid JSON in recording: {exc.msg}", path=path, line=number) from None
        if (not isinstance(entry, dict) or entry.get("kind") not in RECORD_KINDS
                or not isinstance(entry.get("payload"), dict) or not isinstance(entry.get("t"), int | float)):
            raise ConfigError('each line must be {"t": number, "kind": meta|status|event|metric, "payload": {}}',
                              path=path, line=number)
        entries.append(entry)
    return entries
