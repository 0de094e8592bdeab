"""Job kinds, statuses and the lifecycle event names the server itself emits.

Kept in one place so storage, the runner and the replay executor agree on them.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

from synth_nb.local.dialects import ending_events

__all__ = [
    "ACTIVE",
    "KINDS",
    "TERMINAL",
    "lifecycle_event",
    "mask_secret",
    "new_id",
    "replay_speed_problem",
    "server_event_types",
    "utc_now",
]

KINDS = ("sft", "rl", "prompt_learning")
#: never ``error``: 0.2.24's ``synth-ai train`` polls forever on it
TERMINAL = frozenset({"succeeded", "failed", "cancelled"})
ACTIVE = frozenset({"queued", "running"})
#: replay speed factors: slower than 1/100 or faster than 10 000 times is a typo (1e-300 never ends)
REPLAY_SPEEDS = (0.01, 10_000.0)

#: event-type prefix per kind, chosen so 0.2.24's terminal-event lists recognise ours
_PREFIX = {"sft": "sft", "rl": "rl.job", "prompt_learning": "prompt.learning"}
_SUFFIX = {
    "created": "created",
    "running": "started",
    "failed": "failed",
    "cancelled": "cancelled",
}
# ``sft.job.failed`` / ``rl.job.failed`` end the 0.2.24 stream; ``sft.created`` is its creation event
_OVERRIDES = {("sft", "failed"): "sft.job.failed", ("sft", "cancelled"): "sft.job.cancelled",
              ("sft", "running"): "sft.running"}


def lifecycle_event(kind: str, phase: str) -> str:
    """Event type the server emits when a job of ``kind`` reaches ``phase`` (created/running/failed/…)."""
    if (kind, phase) in _OVERRIDES:
        return _OVERRIDES[(kind, phase)]
    return f"{_PREFIX.get(kind, kind)}.{_SUFFIX[phase]}"


def server_event_types(kind: str) -> frozenset[str]:
    """Every lifecycle event type for ``kind``, with the later clients' ending names the runner adds
    (``dialects.ending_events``): replays skip recorded copies of these."""
    algorithms = ("gepa", "mipro") if kind == "prompt_learning" else (None,)
    later = {name for algorithm in algorithms for end in ("completed", "failed")
             for name in ending_events(kind, algorithm, end)}
    return frozenset({*(lifecycle_event(kind, phase) for phase in _SUFFIX), *later})


def utc_now() -> str:
    """ISO-8601 UTC with microseconds, so two status changes never share an ``updated_at``."""
    return datetime.now(UTC).isoformat(timespec="microseconds")[:-6] + "Z"  # "+00:00" -> "Z"; strftime is slower


def new_id(prefix: str) -> str:
    """``job_``/``pl_``/``file_`` + 16 hex chars (the formats 0.2.24 accepts)."""
    return f"{prefix}{secrets.token_hex(8)}"


def mask_secret(value: str | None) -> str:
    """Same rule as ``synth_nb.secrets.mask`` (this package must not import synth_nb outside local)."""
    if not value:
        return ""
    return "••••" + value[-4:] if len(value) >= 12 else "••••"


def replay_speed_problem(speed: object) -> str | None:
    """Why ``speed`` is no replay speed factor (None when it is one)."""
    low, high = REPLAY_SPEEDS
    if isinstance(speed, bool) or not isinstance(speed, int | float) or not low <= speed <= high:
        return f"must be a number from {low:g} to {high:g}, got {speed!r}"
    return None
