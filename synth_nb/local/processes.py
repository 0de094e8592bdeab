"""Which process a pid is now: alive, started when, running what (Linux ``/proc``; elsewhere what a signal says).

A pid is reused once its process ends, so a pid alone never proves which program holds it; its start time
(with the boot it belongs to) does.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["pid_alive", "process_start", "runs_synth_nb"]


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its parent counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc here: trust the signal
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def process_start(pid: int) -> str | None:
    """``<boot id>:<start time>`` of ``pid`` (Linux ``/proc``), which no later process with the same pid
    shares; None where it cannot be read (no ``/proc``, or no such process)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return f"{boot}:{fields[19]}" if len(fields) > 19 else None  # field 22 of stat: starttime


def runs_synth_nb(pid: int) -> bool:
    """Whether ``pid`` runs synth_nb (Linux tells through /proc; elsewhere assume it does)."""
    try:
        return b"synth_nb" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return not Path("/proc").is_dir()
