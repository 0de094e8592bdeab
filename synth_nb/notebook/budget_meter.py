"""The monitor panel's "budget left" meter: each watchdog limit with what is used and what is left.

It is part of the panel's status output (static HTML with a text copy), so a saved notebook keeps the
last state of the budget like the rest of the status. A limit the backend does not report says so
rather than showing an empty bar; the limit that stopped the job is marked crossed (the status line says
why the job stopped, once: ``synth_nb.job.ending``). Time is said as a duration (``1 min 30 s``).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from synth_nb.job.budget import Meter
    from synth_nb.job.watchdog import Watchdog

__all__ = ["budget_html", "budget_text", "meter_line"]


def meter_line(meter: Meter) -> str:
    """``rollouts: 40 of 60 used, 20 left``, ``time: 1 min 30 s of 10 min 00 s used, 8 min 30 s left`` (or
    what the meter waits for)."""
    label = {"plateau": "evaluations without a new best", "minutes": "time"}.get(meter.name, meter.unit)
    if meter.used is None or meter.left is None:
        return f"{meter.flag} {meter.limit:g}: {meter.waiting}"
    return (f"{label}: {meter.amount(meter.used)} of {meter.amount(meter.limit)} used, "
            f"{meter.amount(meter.left)} left")


def budget_text(watchdog: Watchdog | None) -> str:
    """The meter as plain lines (the status output's text copy); empty without a watchdog."""
    meters = watchdog.meters() if watchdog is not None else []
    if watchdog is None or not meters:
        return ""
    return "\n" + "\n".join(["budget left:", *(f"  {meter_line(m)}" for m in meters)])


def budget_html(watchdog: Watchdog | None) -> str:
    """The meter as static HTML: one ``<meter>`` per limit, labelled with used and left."""
    meters = watchdog.meters() if watchdog is not None else []
    if watchdog is None or not meters:
        return ""
    esc = html.escape
    rows = []
    for m in meters:
        line = meter_line(m)
        bar = "" if m.used is None else (
            f"<meter min='0' max='{m.limit:g}' value='{min(m.used, m.limit):g}' high='{0.8 * m.limit:g}' "
            f"optimum='0' aria-label='{esc(line)}' style='width:10em;margin-right:.5em'></meter>")
        crossed = " data-crossed='true'" if m.crossed else ""
        rows.append(f"<li data-limit='{esc(m.name)}'{crossed}>{bar}{esc(line)}</li>")
    return ("<div class='synth-budget' role='group' aria-label='budget left' data-testid='budget'>"
            "<div class='synth-events-head'>budget left</div>"
            f"<ul style='list-style:none;margin:0;padding:0'>{''.join(rows)}</ul></div>")
