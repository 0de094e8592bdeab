"""The flow's chart of the job, drawn once as a PNG (``synth_nb.flows.chart_png``, the one chart renderer) and
put inline, with alt text saying what it shows and a table of its latest values (what a sanitizer that drops
``data:`` images, or a screen reader, leaves to read).

``chart_alt`` is also the live chart's alt text (``synth_nb.notebook.chart``): one wording for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synth_nb.flows import get_flow
from synth_nb.flows.chart import ChartData
from synth_nb.flows.chart_png import chart_png
from synth_nb.job.report_html._base import ReportSource, Section, figure, grid_table

__all__ = ["chart_alt", "chart_section", "job_chart"]


def job_chart(job: Any) -> ChartData:
    """The flow's chart data of ``job``: every metric point and event it holds."""
    data = ChartData(get_flow(job.flow).chart)
    data.extend(job.metrics, job.events)
    return data


def chart_alt(title: str, data: ChartData, rows: Sequence[dict[str, Any]] | None = None) -> str:
    """What the chart shows, in words: "… best so far 0.81 at rollouts used 720; baseline (search) 0.65"."""
    rows = data.latest_values() if rows is None else rows
    if not rows:
        return f"{title} chart: {data.spec.waiting_text().rstrip('…')}."
    axis = data.xlabel().split(" (")[0]
    said = []
    for r in rows:
        text = f"{r['series']} {r['latest']:.3g}"
        if r["step"] is not None:
            text += f" at {axis} {r['step']}"
            if r["best"] != r["latest"]:
                text += f" (best {r['best']:.3g})"
        said.append(text)
    return f"{title} chart: " + "; ".join(said) + "."


def chart_section(source: ReportSource) -> Section:
    data = job_chart(source.job)
    spec = data.spec
    if data.empty:
        return Section("chart", spec.title, "<p>The job reported no metrics to chart.</p>")
    rows = data.latest_values()
    png = chart_png(data, spec.title)
    caption = f"{spec.ylabel} by {data.xlabel()}" + (f". {spec.legend}" if spec.legend else "")
    shown = figure(png, chart_alt(spec.title, data, rows), caption) if png is not None else ""
    table = grid_table(["Series", "Last step", "Last value", "Best", "Points"],
                       [(r["series"], "" if r["step"] is None else r["step"], f"{r['latest']:.4f}",
                         f"{r['best']:.4f}", r["points"]) for r in rows],
                       f"The chart's values: {spec.ylabel}, last and best of each series")
    return Section("chart", spec.title, shown + table)
