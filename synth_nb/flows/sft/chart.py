"""The SFT chart: training and validation loss per step (metric spellings of both backends).

The training loss is read from the ``sft.progress`` events too, which arrive by the event stream before the
metrics page that carries the same points; once metric points come, they are drawn instead.
"""

from __future__ import annotations

from synth_nb.flows.chart import ChartSpec, SeriesSpec, step_value

__all__ = ["CHART"]

CHART = ChartSpec(
    title="SFT loss",
    xlabel="training step",
    ylabel="loss (lower is better)",
    series=(
        SeriesSpec("train", "train loss", frozenset({"train.loss", "sft.train.loss", "training_loss", "loss"}),
                   color="#1f77b4", from_event=step_value("sft.progress", "loss")),
        SeriesSpec("validation", "validation loss",
                   frozenset({"val.loss", "validation.loss", "eval.loss", "valid.loss", "sft.val.loss"}),
                   color="#d62728"),
    ),
)
