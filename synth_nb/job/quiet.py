"""Quiet progress, for a job followed where nobody watches it live: a notebook run by nbconvert, papermill or
nbclient (no front end), a command whose stdout is not a terminal (CI logs, pipes).

Instead of a line per update, one progress line each time the job passes another tenth of its work, or once
30 s have passed since the last line when it has not (a heartbeat for a long step), and none once the job
has ended (the door's final block says how it ended). One rule for both doors: the notebook's headless panel
and the terminal's quiet line mode ask the same ``QuietProgress`` whether a line is due, and print its line.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from synth_nb.flows import get_flow
from synth_nb.job.describe import latest_metrics, metric_values
from synth_nb.job.progress import Progress, format_duration, parse_time, progress_of
from synth_nb.records import TERMINAL_STATUSES

__all__ = ["EVERY_FRACTION", "EVERY_SECONDS", "QuietProgress", "elapsed_of"]

#: a line each time the job passes another tenth of its work…
EVERY_FRACTION = 0.10
#: …or once this long has passed since the last line
EVERY_SECONDS = 30.0
#: the newest events progress is read from (a job may hold millions)
RECENT_EVENTS = 300
#: metric series named in a progress line, those the flow's chart draws first (the final block names every one)
LINE_METRICS = 3


def elapsed_of(job: Any, wall: Callable[[], float] = time.time) -> float | None:
    """Seconds since the job started (to its end once it ended), from its status document; None if unknown."""
    doc = job.status_doc
    start = next((t for t in (parse_time(doc.get(k)) for k in ("started_at", "created_at")) if t), None)
    if start is None:
        return None
    end = next((t for t in (parse_time(doc.get(k)) for k in ("finished_at", "completed_at")) if t), None)
    return max(0.0, (end or wall()) - start)


class QuietProgress:
    """Says when a progress line is due for ``job`` (``poll``) and what it says."""

    def __init__(self, job: Any, *, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time, every_fraction: float = EVERY_FRACTION,
                 every_seconds: float = EVERY_SECONDS) -> None:
        self.job = job
        self.clock, self.wall = clock, wall
        self.every_fraction, self.every_seconds = every_fraction, every_seconds
        self._last_time = clock()
        self._last_mark = -1
        #: how many lines were due so far
        self.lines = 0

    def progress(self) -> Progress:
        return progress_of(self.job.status_doc, self.job.events[-RECENT_EVENTS:], elapsed_of(self.job, self.wall),
                           status=self.job.status)

    def poll(self) -> str | None:
        """The progress line if one is due now (a new tenth of the work passed, or ``every_seconds`` since the
        last line), else None; None once the job has ended."""
        if self.job.status in TERMINAL_STATUSES:
            return None
        progress = self.progress()
        now = self.clock()
        fraction = progress.fraction
        mark = math.floor(fraction / self.every_fraction + 1e-9) if fraction is not None else None
        if not ((mark is not None and mark > self._last_mark) or now - self._last_time >= self.every_seconds):
            return None
        if mark is not None:
            self._last_mark = mark
        self._last_time = now
        self.lines += 1
        return self.line(progress)

    def line(self, progress: Progress | None = None) -> str:
        """``running · 480/1000 rollouts (48%) · elapsed 12 s · ETA 13 s · gepa.best_score=0.7500 (step 480)``."""
        progress = progress or self.progress()
        elapsed = elapsed_of(self.job, self.wall)
        parts = [str(self.job.status or "queued")]
        if progress.label():
            parts.append(progress.label())
        if elapsed is not None:
            parts.append(f"elapsed {format_duration(elapsed)}")
        if progress.eta_seconds is not None:
            parts.append(f"ETA {format_duration(progress.eta_seconds)}")
        latest = latest_metrics(self.job.metrics)
        charted = {name for series in get_flow(self.job.flow).chart.series for name in series.metric_names}
        shown = sorted(latest, key=lambda point: point.name not in charted)[:LINE_METRICS]
        if shown:
            parts.append(metric_values(shown))
        return " · ".join(parts)

    def final_lines(self) -> list[str]:
        """How the job ended, in a few lines: status, work done and time, every metric's last value."""
        progress = self.progress()
        elapsed = elapsed_of(self.job, self.wall)
        head = [f"Final status: {self.job.status}"]
        if progress.label():
            head.append(progress.label())
        if elapsed is not None:
            head.append(f"elapsed {format_duration(elapsed)}")
        lines = [" · ".join(head)]
        latest = latest_metrics(self.job.metrics)
        if latest:
            lines.append(f"  last metrics: {metric_values(latest)}")
        return lines
