"""The monitor panel's "budget left" meter: each watchdog limit with what is used and what is left.

It is part of the panel's status output (static HTML with a text copy), so a saved notebook keeps the
last state of the budget like the rest of the status. A limit the backend does not report says so
rather than showing an empty bar; the limit that stopped the job is named, with what the backend kept.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from synth_nb.job.watchdog import Meter, Watchdog

__all__ = ["budget_html", "budget_text", "meter_line"]


def _amount(value: float, meter: Meter) -> str:
    if meter.name == "minutes":
        return f"{value:,.1f}"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4g}"


def meter_line(meter: Meter) -> str:
    """``rollouts: 40 of 60 used, 20 left`` (or that the backend does not report it)."""
    label = meter.unit if meter.name != "plateau" else "evaluations without a new best"
    if meter.used is None or meter.left is None:
        return f"{meter.flag} {meter.limit:g}: not reported by the backend for this job"
    return (f"{label}: {_amount(meter.used, meter)} of {_amount(meter.limit, meter)} used, "
            f"{_amount(meter.left, meter)} left")


def budget_text(watchdog: Watchdog | None) -> str:
    """The meter as plain lines (the status output's text copy); empty without a watchdog."""
    meters = watchdog.meters() if watchdog is not None else []
    if watchdog is None or not meters:
        return ""
    lines = ["budget left:", *(f"  {meter_line(m)}" for m in meters)]
    if watchdog.stopped is not None:
        lines.append(f"  {watchdog.report()}")
    return "\n" + "\n".join(lines)


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
    stopped = "" if watchdog.stopped is None else f"<p class='synth-budget-stopped'><strong>{esc(watchdog.report())}</strong></p>"
    return ("<div class='synth-budget' role='group' aria-label='budget left' data-testid='budget'>"
            "<div class='synth-events-head'>budget left</div>"
            f"<ul style='list-style:none;margin:0;padding:0'>{''.join(rows)}</ul>{stopped}</div>")
