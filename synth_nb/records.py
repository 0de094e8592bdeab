"""Records the client side shares: job statuses, events and metric points."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from synth_nb.statuses import ACTIVE_STATUSES, TERMINAL_STATUSES, normalize_status

__all__ = ["ACTIVE_STATUSES", "METRIC_ALIASES", "TERMINAL_STATUSES", "UNPARSED_EVENT_TYPE", "Event", "MetricPoint",
           "normalize_status"]

#: the type of an event kept although it could not be read (``data.raw`` holds it as sent, ``data.reason`` why)
UNPARSED_EVENT_TYPE = "unparsed"

#: a later backend's name for a metric -> the name it is kept under (the same series: a backend speaking
#: both sends each point twice, and it is kept once)
METRIC_ALIASES = {"gepa.transformation.mean_reward": "gepa.transformation.mean_score"}


class Event(BaseModel):
    """One job event; ``seq`` is monotonic per job and the dedupe key."""

    model_config = ConfigDict(extra="allow")

    seq: int
    type: str
    message: str = ""
    level: str = "info"
    data: dict[str, Any] = Field(default_factory=dict)
    created_at: str | None = None

    @property
    def is_error(self) -> bool:
        """An error-level event or a ``*.failed`` one: never hidden, and the reason a failed job gives."""
        return self.level.lower() == "error" or self.type.endswith(".failed")


class MetricPoint(BaseModel):
    """One metric sample; ``(name, step)`` is the dedupe key."""

    model_config = ConfigDict(extra="allow")

    name: str
    step: int
    value: float
    epoch: int | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    created_at: str | None = None
