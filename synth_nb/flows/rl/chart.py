"""The RL chart: mean training reward and eval reward per step (metric spellings of both backends).

The training reward is read from the ``rl.train.step`` events too, which arrive by the event stream seconds
before the metrics page that carries the same points; once metric points come, they are drawn instead.
"""

from __future__ import annotations

from synth_nb.flows.chart import ChartSpec, SeriesSpec, step_value

__all__ = ["CHART"]

CHART = ChartSpec(
    title="RL reward",
    xlabel="training step",
    ylabel="reward (higher is better)",
    series=(
        SeriesSpec("train", "mean reward",
                   frozenset({"train.reward_mean", "rl.reward_mean", "reward.mean", "reward_mean", "mean_reward",
                              "train.reward", "rollout.reward_mean", "train.mean_reward"}),
                   color="#2ca02c", higher_is_better=True, from_event=step_value("rl.train.step", "reward_mean")),
        SeriesSpec("eval", "eval reward",
                   frozenset({"eval.reward_mean", "eval.reward", "eval.mean_reward", "rl.eval.reward_mean"}),
                   color="#9467bd", higher_is_better=True),
    ),
)
