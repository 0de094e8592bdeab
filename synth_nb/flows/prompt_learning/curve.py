"""The optimisation curve of a prompt-learning job: its chart (``chart.CHART``) drawn once as PNG."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from synth_nb.flows.chart import ChartData
from synth_nb.flows.chart_png import chart_png
from synth_nb.flows.prompt_learning.chart import CHART

__all__ = ["curve_png"]


def curve_png(metrics: Iterable[Any], events: Iterable[Any], *, title: str) -> bytes | None:
    """Trial scores, best so far and baseline from a job's metric points and events; None when empty."""
    data = ChartData(CHART)
    data.extend(metrics, events)
    return chart_png(data, title)
