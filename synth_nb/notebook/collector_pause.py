"""While a live panel follows a job, the kernel's older objects are left out of the garbage collector's passes.

Measured (``benchmarks/panel.py``, objects timed in the kernel): of the live panel's 2.3–2.5% of a core while
a job streams 100 events/s and 100 points/s, about 0.5% was one full pass of Python's cyclic garbage
collector every 15 s or so, walking every object the kernel holds (matplotlib's, IPython's, the widgets', the
user's) because the job's events and points kept adding long-lived objects. ``gc.freeze`` moves the objects
that exist now to a generation the collector skips; objects made afterwards (the job's) are collected as
before, and reference counting frees everything as always: only a cycle that becomes garbage while frozen
waits. So the objects are frozen once the panel's chart has drawn (matplotlib imported, the figure made) and
returned to the collector (``gc.unfreeze``) when the last live panel stops following its job. A process that
froze objects itself is left alone.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["hold", "release"]

_lock = threading.Lock()
_holders = 0
_froze = False


def hold() -> None:
    """A live panel starts streaming: freeze what exists now (the first holder only)."""
    global _holders, _froze
    with _lock:
        _holders += 1
        if _holders == 1 and gc.get_freeze_count() == 0:
            gc.freeze()
            _froze = True


def release() -> None:
    """A live panel stopped streaming: the last one returns the frozen objects to the collector."""
    global _holders, _froze
    with _lock:
        _holders = max(0, _holders - 1)
        if _holders == 0 and _froze:
            gc.unfreeze()
            _froze = False
