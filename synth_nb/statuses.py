"""A job's status names: which end it and which mean it still runs (kept apart from ``synth_nb.records``,
whose pydantic models a command that only lists jobs need not import)."""

from __future__ import annotations

__all__ = ["ACTIVE_STATUSES", "TERMINAL_STATUSES"]

#: ``error`` is terminal too (0.2.24 polls forever on it; we do not)
TERMINAL_STATUSES = frozenset({"succeeded", "failed", "cancelled", "error"})
ACTIVE_STATUSES = frozenset({"queued", "pending", "validating", "running", "in_progress", "training"})
