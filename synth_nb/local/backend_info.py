"""``backend.json``: what a data folder's info file says about the backend process serving it.

The process writes it once it listens (``write_info``) and removes it when it stops; a kernel or command reads it
to find that process again (``synth_nb.local.shared``), and a client following jobs on it reads it to tell a
busy backend from one that is gone (``process_alive``). The pid's start time is recorded with it, so a pid given
since to another process is never taken for the backend (``same_process``).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from synth_nb.local.key_files import write_private
from synth_nb.local.processes import pid_alive, process_start

__all__ = ["INFO_FILE", "BackendInfo", "process_alive", "read_info", "remove_info", "same_process", "write_info"]

INFO_FILE = "backend.json"


@dataclass(frozen=True)
class BackendInfo:
    """What ``backend.json`` says about the process serving a data folder."""

    url: str
    pid: int
    started_at: str
    version: str
    data_dir: str
    #: ``<boot id>:<start time in clock ticks>`` of ``pid`` (``/proc``), "" where it cannot be read: a pid
    #: given to another process since has another
    process_start: str = ""

    @property
    def uptime_seconds(self) -> float:
        started = datetime.fromisoformat(self.started_at)
        return max(0.0, (datetime.now(UTC) - started).total_seconds())


def write_info(url: str, data_dir: Path, version: str) -> BackendInfo:
    """Say that this process serves ``data_dir`` at ``url`` (call once it listens)."""
    info = BackendInfo(url, os.getpid(), datetime.now(UTC).isoformat(timespec="seconds"), version,
                       str(Path(data_dir).resolve()), process_start(os.getpid()) or "")
    write_private(Path(data_dir) / INFO_FILE, json.dumps(asdict(info), indent=2) + "\n")
    return info


def read_info(data_dir: Path) -> BackendInfo | None:
    """The info file of ``data_dir``, or None if there is none (or it is not one)."""
    try:
        doc = json.loads((Path(data_dir) / INFO_FILE).read_text(encoding="utf-8"))
        return BackendInfo(str(doc["url"]), int(doc["pid"]), str(doc["started_at"]), str(doc.get("version", "")),
                           str(doc.get("data_dir", data_dir)), str(doc.get("process_start") or ""))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remove_info(data_dir: Path, pid: int) -> None:
    """Remove the info file if it still names ``pid`` (a newer process may have replaced it)."""
    info = read_info(data_dir)
    if info is not None and info.pid == pid:
        (Path(data_dir) / INFO_FILE).unlink(missing_ok=True)


def same_process(info: BackendInfo) -> bool | None:
    """Whether ``info.pid`` is still the process that wrote ``info`` (its start time is the recorded one);
    None when that cannot be told (a file without the start time, or no ``/proc``)."""
    if not info.process_start or not Path("/proc").is_dir():
        return None
    return process_start(info.pid) == info.process_start


def process_alive(info: BackendInfo) -> bool:
    """Whether the process ``info`` names still runs: cheap (no request), for a client that follows jobs
    on it and must tell a backend that is busy from one that is gone (``kill -9`` leaves its info file)."""
    return pid_alive(info.pid) and same_process(info) is not False
