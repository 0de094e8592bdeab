"""The block ``synth-nb train`` / ``attach`` print when following a job ends: what it did and where it left it.

At least what synth-ai 0.2.24's final summary shows, and for every flow: the status, why the job stopped
(``Job.ending``: one stop reason), the rollouts, tokens, time and cost it used each beside the estimate it
was sent with and their ratio, the gain over the baseline (absolute and relative, and on which seeds), the
counts and last metric values, in line mode a small ASCII curve of the headline series, then where its
result files and bundle are. Every line is masked and made inert (it quotes the backend).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from synth_nb.flows import get_flow
from synth_nb.flows.artifacts import unreadable_metrics_note
from synth_nb.flows.chart import ChartData
from synth_nb.job import Job
from synth_nb.job.describe import (
    latest_metrics,
    linked_summary,
    linked_unfollowable,
    metric_values,
    phases_line,
)
from synth_nb.records import UNPARSED_EVENT_TYPE
from synth_nb.secrets import mask_text
from synth_nb.untrusted import inert

if TYPE_CHECKING:
    from synth_nb.job.results import Results

__all__ = ["CURVE_HEIGHT", "CURVE_WIDTH", "curve_lines", "final_block"]

#: the ASCII curve's plot area, in characters
CURVE_WIDTH = 48
CURVE_HEIGHT = 6
#: the width of the block's labels ("  rollouts: ")
_LABEL = 10


def _row(label: str, text: str) -> str:
    return f"  {(label + ':') if label else '':<{_LABEL}}{text}"


def _linked_lines(job: Job) -> list[str]:
    note, linked = job.linked_note, job.linked
    if note is None:
        return []
    if linked is None:
        return [f"  linked job: {linked_unfollowable(note)}"]
    lines = [f"  linked job: {linked_summary(linked, 'synth-nb attach')}"]
    latest = latest_metrics(linked.metrics)
    if latest:
        lines.append(f"  linked last metrics: {metric_values(latest)}")
    return lines


def _columns(x: Sequence[float], y: Sequence[float], width: int) -> list[float | None]:
    """One value per column: the last point falling in it; a column no point falls in repeats the one before."""
    low, high = x[0], x[-1]
    span = (high - low) or 1.0
    cells: list[float | None] = [None] * width
    for xi, yi in zip(x, y, strict=True):
        cells[min(width - 1, int((xi - low) / span * (width - 1)))] = yi
    for i in range(1, width):
        if cells[i] is None:
            cells[i] = cells[i - 1]
    return cells


def curve_lines(job: Job, width: int = CURVE_WIDTH, height: int = CURVE_HEIGHT) -> list[str]:
    """The headline series (the flow's running best when it has one, else its first series) as a small ASCII
    plot, captioned with what it measures and along what; empty when it has fewer than two points."""
    chart = ChartData(get_flow(job.flow).chart)
    chart.extend(job.metrics, ())
    if chart.draws_events:  # the curve is a series: events it would not draw are not read (a long job's are many)
        chart.extend((), job.events)
    drawn = [b for b in chart.series.values() if len(b.xy()[1]) >= 2]
    if not drawn:
        return []
    series = next((b for b in drawn if b.spec.best_of is not None), drawn[0])
    x, y = (list(map(float, a)) for a in series.xy())
    top, bottom = max(y), min(y)
    height = height if top != bottom else 1  # a flat series is one row
    rows = [[" "] * width for _ in range(height)]
    for col, cell in enumerate(_columns(x, y, width)):
        if cell is not None:
            level = 0 if top == bottom else round((cell - bottom) / (top - bottom) * (height - 1))
            rows[height - 1 - level][col] = "*"
    scale = f"{top:.4g}", f"{bottom:.4g}"
    pad = max(map(len, scale))
    lines = [_row("curve", f"{series.spec.label} ({chart.spec.ylabel}), by {chart.xlabel()}")]
    for i, row in enumerate(rows):
        tick = scale[1] if i == height - 1 else scale[0] if i == 0 else ""
        lines.append(f"    {tick:>{pad}} {'+' if tick else '|'}{''.join(row).rstrip()}")
    ends = f"{x[0]:,.0f}".ljust(width - len(f"{x[-1]:,.0f}")) + f"{x[-1]:,.0f}"
    lines += [f"    {'':>{pad}} +{'-' * width}", f"    {'':>{pad}}  {ends}"]
    return lines


def final_block(job: Job, secrets: Sequence[str], note: str = "", *, results: Results | None = None,
                timed_out: float | None = None, curve: bool = True) -> str:
    """The block printed when following ends (``timed_out``: ``--poll-timeout`` ended it after that many seconds;
    ``curve``: line mode's ASCII curve; ``results``: where the job's files were written)."""
    doc = job.status_doc
    ending = job.ending(timed_out=timed_out)
    lines = [f"Final status: {job.status}" + (f" ({note})" if note else ""),
             _row("job", f"{job.id} ({job.flow}{'/' + job.algorithm if job.algorithm else ''})"),
             _row("backend", job.backend_url)]
    lines += [_row(label, text) for label, text in ending.rows()]
    lines.append(_row("events", f"{len(job.events)}   metrics: {len(job.metrics)}"))
    phases = phases_line(job.timeline)
    if phases:
        lines.append(_row("phases", phases))
    latest = latest_metrics(job.metrics)
    if latest:
        lines.append(f"  last metrics: {metric_values(latest)}")
    scores = get_flow(job.flow).headline_scores(job)
    for key in ("fine_tuned_model", "best_score", "error"):
        if key == "best_score" and "best_score" in scores:
            if "baseline_score" in scores:
                lines.append(f"  baseline_score: {scores['baseline_score']}")
            lines.append(f"  best_score: {scores['best_score']}")
        elif doc.get(key) not in (None, ""):
            lines.append(f"  {key}: {doc[key]}")
    unparsed = sum(1 for _ in job.events.of_types((UNPARSED_EVENT_TYPE,)))
    if unparsed:
        lines.append(f"  note: {unparsed} item(s) the backend sent could not be interpreted; they are kept as "
                     f"'{UNPARSED_EVENT_TYPE}' events (job.events)")
    lines += _linked_lines(job)
    unreadable = unreadable_metrics_note(job.unreadable_metrics)
    if unreadable:
        lines.append(f"  note: {unreadable}")
    if curve:
        lines += curve_lines(job)
    if results is not None:
        if results.files:
            lines.append(_row("summary", str(results.files[0])))
        if results.bundle is not None:
            lines.append(_row("bundle", str(results.bundle)))
    return mask_text("\n".join(inert(line) for line in lines if line), tuple(s for s in secrets if s))
