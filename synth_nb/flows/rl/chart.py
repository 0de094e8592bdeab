"""The RL chart: mean training reward and eval reward per step (metric spellings of both backends).

The training reward is read from the ``rl.train.step`` events too, which arrive by the event stream seconds
before the metrics page that carries the same points; once metric points come, they are drawn instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synth_nb.flows.chart import ChartSpec, SeriesSpec, number

__all__ = ["CHART", "train_step_reward"]


def train_step_reward(etype: str, data: Mapping[str, Any], count: int) -> tuple[int, float] | None:
    """(step, mean reward) of an ``rl.train.step`` event that reports both."""
    step, reward = number(data.get("step")), number(data.get("reward_mean"))
    if etype != "rl.train.step" or step is None or reward is None:
        return None
    return int(step), reward

CHART = ChartSpec(
    title="RL reward",
    xlabel="training step",
    ylabel="reward (higher is better)",
    series=(
        SeriesSpec("train", "mean reward",
                   frozenset({"train.reward_mean", "rl.reward_mean", "reward.mean", "reward_mean", "mean_reward",
                              "train.reward", "rollout.reward_mean", "train.mean_reward"}),
                   color="#2ca02c", higher_is_better=True, from_event=train_step_reward),
        SeriesSpec("eval", "eval reward",
                   frozenset({"eval.reward_mean", "eval.reward", "eval.mean_reward", "rl.eval.reward_mean"}),
                   color="#9467bd", higher_is_better=True),
    ),
)
