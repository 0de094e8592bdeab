"""A job's run-health warnings, for every door: asked of its flow, bounded, and said the same way everywhere.

A flow's rules (``Flow.health``) find the signs in what a job streamed — a reward rising while the eval
reward falls, a validation loss rising while the train loss falls, a prompt that wins only on the search's own
seeds, … — each a ``HealthWarning`` (``synth_nb.flows.health``: code, headline, evidence, series, steps). The
dataclass and the helpers the rules share live with the flows, which never import the job layer; this module
is what the doors call. ``health_of(job)`` is part of ``Ending`` (``synth_nb.job.ending``), so the terminal's
final block, ``summary.md`` (the "How it ended" table) and ``run.json`` carry the warnings of a finished job;
the notebook panel's status shows them while the job runs too (``LiveHealth``: asked again only when new
points came, and at most every ``LIVE_EVERY`` seconds).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from synth_nb.flows import get_flow
from synth_nb.flows.artifacts import FinishedJob
from synth_nb.flows.health import HealthWarning

__all__ = ["LABEL", "MAX_WARNINGS", "HealthWarning", "LiveHealth", "health_of", "health_rows"]

#: the label of a warning's row in the final block, ``summary.md`` and the panel
LABEL = "warning"
#: at most this many warnings are kept (a hostile or broken stream must not flood a door)
MAX_WARNINGS = 8
#: seconds between two readings of a running job's warnings
LIVE_EVERY = 5.0


def health_of(job: FinishedJob) -> tuple[HealthWarning, ...]:
    """The job's warnings from what it holds so far, in its flow's order, one per code."""
    found: dict[str, HealthWarning] = {}
    for warning in get_flow(job.flow).health(job):
        found.setdefault(warning.code, warning)
    return tuple(found.values())[:MAX_WARNINGS]


def health_rows(warnings: Sequence[HealthWarning]) -> list[tuple[str, str]]:
    """``("warning", line)`` per warning, the rows the doors add to how the job ended."""
    return [(LABEL, warning.line()) for warning in warnings]


class LiveHealth:
    """A running job's warnings, read again when it has new events or points and ``every`` seconds passed."""

    def __init__(self, job: FinishedJob, *, every: float = LIVE_EVERY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.job = job
        self.every = every
        self.clock = clock
        self.warnings: tuple[HealthWarning, ...] = ()
        self._seen: tuple[int, int] = (0, 0)
        self._read_at = float("-inf")

    def current(self) -> tuple[HealthWarning, ...]:
        size = (len(self.job.events), len(self.job.metrics))
        now = self.clock()
        if size != self._seen and now - self._read_at >= self.every:
            self.warnings, self._seen, self._read_at = health_of(self.job), size, now
        return self.warnings
