"""The samples behind an RL job's numbers: one ``rl.rollout.sampled`` event per sampled rollout.

Which rollouts: the first group of every training step (``group_size`` rollouts of one seed, so the
group's advantages can be read side by side) and every rollout of every evaluation round (at most
``MAX_EVAL_SAMPLES``). Each event is bounded: a text longer than ``MAX_TEXT_CHARS`` is cut, and its full
length is said beside it.

Event ``rl.rollout.sampled``, ``data`` fields (the client's rollout views and run-health rules read these):

* ``step`` (int): training: the step the rollout was sampled for (1-based, as ``rl.train.step``);
  evaluation: the step the evaluation ran after (0 = before training)
* ``phase`` (str): ``"train"`` or ``"eval"``
* ``seed`` (int): the task app's seed; ``group`` (int, index of the group within the step; evaluation: 0)
  and ``member`` (int, index within the group; evaluation: index among the evaluation seeds)
* ``prompt`` (str): the chat messages the policy was asked with (``role: content`` lines; for several
  turns, the first); ``prompt_chars`` (int): its full length
* ``completion`` (str): the policy's reply (several turns joined by blank lines); ``completion_chars`` (int)
* ``prompt_tokens`` / ``completion_tokens`` (int): tokens of the first prompt / of every reply
* ``turns`` (int): how many times the task app called the policy
* ``reward`` (float | null): the rollout's reward (null: the rollout failed, ``error`` says why)
* ``reward_components`` (object): name -> number, when the task app reports ``metrics.reward_components``
* ``advantage`` (float | null): the group-normalised advantage the update used (evaluation: null)
* ``group_reward_mean`` / ``group_reward_std`` (float | null): over the rollout's group (evaluation: round)
* ``cut`` (bool): whether a text was cut
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from synth_nb.local.training.channel import Channel
from synth_nb.local.training.policy_service import Sample
from synth_nb.local.training.task_app_client import RolloutOutcome

__all__ = ["MAX_EVAL_SAMPLES", "MAX_TEXT_CHARS", "ROLLOUT_EVENT", "emit_rollouts", "rollout_sample"]

ROLLOUT_EVENT = "rl.rollout.sampled"
#: the longest prompt or completion text an event carries (the rest is cut; its full length is said)
MAX_TEXT_CHARS = 2000
#: the most rollouts of one evaluation round that are sampled
MAX_EVAL_SAMPLES = 64


def _cut(text: str) -> tuple[str, bool]:
    return (text, False) if len(text) <= MAX_TEXT_CHARS else (text[:MAX_TEXT_CHARS] + "…", True)


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)


def rollout_sample(*, step: int, phase: str, seed: int, group: int, member: int, samples: list[Sample],
                   outcome: RolloutOutcome | Exception, advantage: float | None,
                   group_rewards: list[float]) -> tuple[str, dict[str, Any]]:
    """The message and ``data`` of one ``rl.rollout.sampled`` event."""
    prompt_full = samples[0].prompt_text if samples else ""
    completion_full = "\n\n".join(s.completion_text for s in samples)
    prompt, prompt_cut = _cut(prompt_full)
    completion, completion_cut = _cut(completion_full)
    reward = outcome.reward if isinstance(outcome, RolloutOutcome) else None
    data: dict[str, Any] = {
        "step": step, "phase": phase, "seed": seed, "group": group, "member": member,
        "prompt": prompt, "prompt_chars": len(prompt_full), "completion": completion,
        "completion_chars": len(completion_full),
        "prompt_tokens": len(samples[0].prompt_ids) if samples else 0,
        "completion_tokens": sum(len(s.completion_ids) for s in samples), "turns": len(samples),
        "reward": _round(reward),
        "reward_components": dict(outcome.components) if isinstance(outcome, RolloutOutcome) else {},
        "advantage": _round(advantage),
        "group_reward_mean": _round(statistics.fmean(group_rewards)) if group_rewards else None,
        "group_reward_std": _round(statistics.pstdev(group_rewards)) if group_rewards else None,
        "cut": prompt_cut or completion_cut,
    }
    if not isinstance(outcome, RolloutOutcome):
        data["error"] = str(outcome)[:500]
    shown = "failed" if reward is None else f"reward {reward:.3f}"
    return f"{phase} step {step} seed {seed}: {shown}, {data['completion_tokens']} tokens", data


def emit_rollouts(channel: Channel, records: Mapping[int, list[Sample]], *, step: int, phase: str,
                  seeds: Sequence[int], slots: Sequence[int], results: Sequence[RolloutOutcome | Exception],
                  advantages: Mapping[int, float] | None = None, group: int = 0) -> None:
    """One ``rl.rollout.sampled`` event per slot in ``slots`` (``seeds``, ``results``: by slot)."""
    rewards = [r.reward for k in slots if isinstance(r := results[k], RolloutOutcome)]
    for member, slot in enumerate(slots):
        message, data = rollout_sample(step=step, phase=phase, seed=seeds[slot], group=group, member=member,
                                       samples=list(records.get(slot) or []), outcome=results[slot],
                                       advantage=None if advantages is None else advantages.get(slot),
                                       group_rewards=rewards)
        channel.emit(ROLLOUT_EVENT, message, data)
