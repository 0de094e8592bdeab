"""The SFT chart: training and validation loss per step (metric spellings of both backends).

The training loss is read from the ``sft.progress`` events too, which arrive by the event stream before the
metrics page that carries the same points; once metric points come, they are drawn instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synth_nb.flows.chart import ChartSpec, SeriesSpec, number

__all__ = ["CHART", "progress_loss"]


def progress_loss(etype: str, data: Mapping[str, Any], count: int) -> tuple[int, float] | None:
    """(step, training loss) of an ``sft.progress`` event that reports both."""
    step, loss = number(data.get("step")), number(data.get("loss"))
    if etype != "sft.progress" or step is None or loss is None:
        return None
    return int(step), loss

CHART = ChartSpec(
    title="SFT loss",
    xlabel="training step",
    ylabel="loss (lower is better)",
    series=(
        SeriesSpec("train", "train loss", frozenset({"train.loss", "sft.train.loss", "training_loss", "loss"}),
                   color="#1f77b4", from_event=progress_loss),
        SeriesSpec("validation", "validation loss",
                   frozenset({"val.loss", "validation.loss", "eval.loss", "valid.loss", "sft.val.loss"}),
                   color="#d62728"),
    ),
)
