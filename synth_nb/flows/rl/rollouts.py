"""An RL job's sampled rollouts (``rl.rollout.sampled`` events) as rows of a ``SampleTable``.

The embedded backend documents the event's fields in ``synth_nb.local.training.rollout_samples``; a hosted
backend that streams the same event type is read the same way, and a field it leaves out (or sends as
something else) is shown as missing. A job without such events has an empty table.
"""

from __future__ import annotations

from typing import Any

from synth_nb.flows.sample_rows import SampleSpec, as_int, as_number, as_text

__all__ = ["ROLLOUTS", "ROLLOUT_EVENT", "rollout_row"]

ROLLOUT_EVENT = "rl.rollout.sampled"
_COLUMNS = (("step", "step"), ("phase", "phase"), ("seed", "seed"), ("member", "#"), ("reward", "reward"),
            ("advantage", "advantage"), ("completion_tokens", "tokens"), ("reward_components", "reward parts"))
_TEXTS = (("prompt", "prompt"), ("completion", "completion"))
_NOTES = ("Sampled: the first group of every training step (phase train; advantage = the group-normalised "
          "advantage the update used) and the rollouts of every evaluation round (phase eval, the evaluation "
          "seeds). Rewards are the task app's.",)


def _components(value: Any) -> dict[str, float]:
    if not isinstance(value, dict):
        return {}
    return {str(k)[:64]: n for k, v in list(value.items())[:16] if (n := as_number(v)) is not None}


def rollout_row(data: Any) -> dict[str, Any]:
    data = data if isinstance(data, dict) else {}
    prompt, prompt_chars = as_text(data.get("prompt"))
    completion, completion_chars = as_text(data.get("completion"))
    phase = data.get("phase")
    return {
        "step": as_int(data.get("step")), "phase": phase if phase in ("train", "eval") else None,
        "seed": as_int(data.get("seed")), "group": as_int(data.get("group")), "member": as_int(data.get("member")),
        "reward": as_number(data.get("reward")), "advantage": as_number(data.get("advantage")),
        "completion_tokens": as_int(data.get("completion_tokens")), "prompt_tokens": as_int(data.get("prompt_tokens")),
        "turns": as_int(data.get("turns")), "reward_components": _components(data.get("reward_components")),
        "group_reward_mean": as_number(data.get("group_reward_mean")),
        "group_reward_std": as_number(data.get("group_reward_std")),
        "prompt": prompt, "prompt_chars": max(prompt_chars, as_int(data.get("prompt_chars")) or 0),
        "completion": completion, "completion_chars": max(completion_chars, as_int(data.get("completion_chars")) or 0),
        "error": as_text(data["error"])[0] if data.get("error") is not None else None,
    }


ROLLOUTS = SampleSpec(kind="rollouts", title="RL rollouts", event_types=frozenset({ROLLOUT_EVENT}), row=rollout_row,
                      columns=_COLUMNS, texts=_TEXTS, score_key="reward", score_label="reward",
                      highlight_phase="train", notes=_NOTES)
