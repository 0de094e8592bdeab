"""The monitor panel's status output: how long its job has run, what the output holds under the status line
(budget meter, the chart's table, the folded report once the job ended) and when it is sent again.

A status render reads the newest events and the chart's latest values and sends the HTML, so it is sent at
most every ``STATUS_EVERY`` seconds while updates arrive, at least that often while the job runs (the
elapsed clock it shows ticks), and at once only when forced (a press, a cancel, the end).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from synth_nb.job.progress import parse_time
from synth_nb.job.view import JobView
from synth_nb.notebook.budget_meter import budget_html, budget_text
from synth_nb.notebook.chart import LiveChart
from synth_nb.notebook.monitor_view import PanelState, render_html, render_text
from synth_nb.records import TERMINAL_STATUSES

__all__ = ["RECENT_EVENTS", "STATUS_EVERY", "ElapsedClock", "PanelStatus"]

#: the newest events a status render reads (progress and the event list); a job may hold millions
RECENT_EVENTS = 500
#: seconds between status renders while updates arrive (each reads the newest events, the chart's latest
#: values, and sends the HTML): as often as the elapsed clock it shows ticks
STATUS_EVERY = 1.0


class ElapsedClock:
    """How long a job has run: from its start in its status document (else from when this clock was made)
    to its end there once it is terminal (else the moment it was first seen terminal), else to now."""

    def __init__(self, job: JobView, wall: Callable[[], float]) -> None:
        self.job = job
        self.wall = wall
        self._started = wall()
        self._ended: float | None = None

    def elapsed(self, status: str) -> float:
        doc = self.job.status_doc
        start = next((t for t in (parse_time(doc.get(k)) for k in ("started_at", "created_at")) if t), None)
        start = start or self._started
        if status in TERMINAL_STATUSES:
            end = next((t for t in (parse_time(doc.get(k)) for k in ("finished_at", "completed_at")) if t), None)
            end = end or self._ended or self.wall()
            self._ended = end
        else:
            end = self.wall()
        return max(0.0, end - start)


class PanelStatus:
    """What the status output of ``job``'s panel holds beside its ``PanelState``, and when it is due again.

    ``dirty``: something it shows changed since it was last rendered; ``report``: once the job ended, its
    report's fragment, folded under the status (``panel_report``)."""

    def __init__(self, job: JobView, chart: LiveChart, *, clock: Callable[[], float]) -> None:
        self.job = job
        self.chart = chart
        self.clock = clock
        self.dirty = True
        self.report = ""
        self._last_render = float("-inf")

    def bundle(self, state: PanelState) -> dict[str, Any]:
        """The status output; with a watchdog, its "budget left" meter sits under the status line."""
        table = "\n" + self.chart.text_table() if not self.chart.data.empty else ""
        watchdog = getattr(self.job, "watchdog", None)
        return {"text/html": render_html(state) + budget_html(watchdog) + self.chart.html_table() + self.report,
                "text/plain": render_text(state) + budget_text(watchdog) + table}

    def due(self, *, force: bool = False) -> bool:
        """Whether to render now (then it counts as rendered): once a second (elapsed time, progress, stall
        notice), sooner only when forced."""
        now = self.clock()
        since = now - self._last_render
        if not force and (since < STATUS_EVERY or (not self.dirty and since < 1.0)):
            return False
        self.dirty = False
        self._last_render = now
        return True
