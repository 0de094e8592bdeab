"""A job's status names: which end it, which mean it still runs, and the backend's spellings of them (kept apart
from ``synth_nb.records``, whose pydantic models a command that only lists or cancels jobs need not import)."""

from __future__ import annotations

__all__ = ["ACTIVE_STATUSES", "TERMINAL_STATUSES", "normalize_status"]

#: ``error`` is terminal too (0.2.24 polls forever on it; we do not)
TERMINAL_STATUSES = frozenset({"succeeded", "failed", "cancelled", "error"})
ACTIVE_STATUSES = frozenset({"queued", "pending", "validating", "running", "in_progress", "training"})

_ALIASES = {
    "completed": "succeeded", "success": "succeeded", "succeeded": "succeeded", "finished": "succeeded",
    "canceled": "cancelled", "cancelled": "cancelled", "failed": "failed", "failure": "failed",
    "error": "error", "errored": "error", "queued": "queued", "pending": "queued", "created": "queued",
    "validating": "queued", "running": "running", "in_progress": "running", "training": "running",
}


def normalize_status(raw: str | None) -> str:
    """Map the backend's status spellings onto queued/running/succeeded/failed/cancelled/error."""
    if not raw:
        return "queued"
    return _ALIASES.get(raw.strip().lower(), raw.strip().lower())
