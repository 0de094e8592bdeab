"""The budget limits a job is watched against (``Limits``) and one limit's reading (``Meter``).

Kept apart from the watchdog that follows a job: a request carries its ``Limits`` and a bundle keeps them, and a
"budget left" meter draws a ``Meter``, without importing what watches a job's history.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from synth_nb.errors import ConfigError
from synth_nb.job.progress import format_duration

__all__ = ["Limits", "Meter"]


@dataclass(frozen=True)
class Limits:
    """The limits asked for; None means "no such limit"."""

    max_minutes: float | None = None
    max_rollouts: int | None = None
    max_tokens: int | None = None
    stop_on_plateau: int | None = None

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Limits:
        """From flag values by argparse dest (``max_minutes`` ...); non-positive values are refused."""
        given = {k: values.get(k) for k in ("max_minutes", "max_rollouts", "max_tokens", "stop_on_plateau")}
        for name, value in given.items():
            if value is not None and value <= 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be greater than 0, got {value:g}",
                                  key=name)
        return cls(**given)

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.max_minutes, self.max_rollouts, self.max_tokens,
                                           self.stop_on_plateau))

    def given(self) -> dict[str, float]:
        """The limits given, by flag dest (what a job's bundle keeps, so a re-run repeats them)."""
        return {name: value for name, value in vars(self).items() if value is not None}

    def __eq__(self, other: object) -> bool:
        """Equal to the same limits, or to a mapping of the given ones by flag dest (``{"max_rollouts": 60}``)."""
        if isinstance(other, Mapping):
            return self.given() == dict(other)
        return isinstance(other, Limits) and self.given() == other.given()

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.given().items())))


@dataclass(frozen=True)
class Meter:
    """One limit and how much of it is used (``used`` None: the backend does not report it)."""

    name: str
    flag: str
    limit: float
    used: float | None
    unit: str

    @property
    def left(self) -> float | None:
        return None if self.used is None else max(0.0, self.limit - self.used)

    @property
    def fraction(self) -> float | None:
        return None if self.used is None else min(1.0, self.used / self.limit)

    @property
    def crossed(self) -> bool:
        return self.used is not None and self.used >= self.limit

    @property
    def trips(self) -> bool:
        """Whether the watchdog cancels: a rollout limit the backend was given only when the job goes past it
        (the backend stops at it), any other limit once it is reached."""
        if self.name == "rollouts":
            return self.used is not None and self.used > self.limit
        return self.crossed

    def amount(self, value: float) -> str:
        """A value of this limit in its unit's words: a duration (``1 min 04 s``) or a count (``1,250``)."""
        if self.name == "minutes":
            return format_duration(value * 60)
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4g}"

    @property
    def waiting(self) -> str:
        """What the meter says before it has a value: nothing measured yet, or nothing reported."""
        return {"minutes": "not started", "plateau": "no evaluation scored yet"}.get(
            self.name, "not reported by the backend so far")

    def line(self) -> str:
        if self.used is None or self.left is None:
            return f"{self.flag} {self.limit:g}: {self.waiting}"
        if self.name == "minutes":
            return f"{self.flag} {self.limit:g}: {self.amount(self.used)} used, {self.amount(self.left)} left"
        return f"{self.flag} {self.limit:g}: {self.amount(self.used)} {self.unit} used, {self.amount(self.left)} left"
