"""Crafted recordings, one per run-health warning, in the format ``--record`` writes (``t``, ``kind``, ``payload``
per JSONL line) and the embedded backend's replay executor serves.

Each shows one sign and nothing else: its other series stay healthy, so a test can hold that exactly its own
warning fires. The RL ones carry the fields the embedded GRPO loop adds to ``rl.train.step``
(``completion_tokens_mean``, ``groups``, ``zero_variance_groups``, ``group_seeds``, ``winning_completions``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["EXPECTED", "write_recordings"]


class Tape:
    """Recording lines on a clock (each line 10 ms after the one before)."""

    def __init__(self, flow: str, **meta: Any) -> None:
        self.t = 0.0
        self.lines: list[dict[str, Any]] = []
        self.add("meta", {"flow": flow, "synthetic": True, "description": "crafted run-health case", **meta})
        self.add("status", {"status": "queued"})
        self.add("status", {"status": "running"})

    def add(self, kind: str, payload: dict[str, Any]) -> None:
        self.t += 0.01
        self.lines.append({"t": round(self.t, 3), "kind": kind, "payload": payload})

    def event(self, type: str, data: dict[str, Any], message: str = "") -> None:  # noqa: A002 (the field's name)
        self.add("event", {"type": type, "message": message or type, "level": "info", "data": data})

    def metric(self, name: str, step: int, value: float) -> None:
        self.add("metric", {"name": name, "step": step, "value": round(value, 4), "data": {}})

    def text(self) -> str:
        return "".join(json.dumps(line) + "\n" for line in self.lines)


def _rl(steps: int, *, reward: Callable[[int], float], evals: dict[int, float],
        length: Callable[[int], float] = lambda s: 10.0, flat: int = 0,
        winner: Callable[[int, int], str] = lambda s, g: f"{s:06x}{g:06x}") -> Tape:
    """An RL run of ``steps`` steps of 4 groups (seeds 4*(step-1) .. +3), evaluated at the steps of ``evals``."""
    tape = Tape("rl")
    tape.event("rl.train.started", {"total_steps": steps, "group_size": 4})
    for step in range(steps + 1):
        if step:
            seeds = list(range(4 * (step - 1), 4 * step))
            tape.metric("train.reward_mean", step, reward(step))
            tape.event("rl.train.step", {
                "step": step, "total_steps": steps, "reward_mean": reward(step), "rollouts": 16,
                "completion_tokens_mean": length(step), "groups": 4, "zero_variance_groups": flat,
                "group_seeds": seeds, "winning_completions": [winner(step, g) for g in range(4)]})
        if step in evals:
            tape.event("rl.eval.started", {"step": step, "seeds": list(range(1000, 1008))})
            tape.metric("eval.reward_mean", step, evals[step])
            tape.event("rl.eval.summary", {"step": step, "reward_mean": evals[step], "n": 8})
    tape.event("rl.train.completed", {"steps": steps, "total_steps": steps})
    tape.event("rl.job.completed", {"fine_tuned_model": "rl:crafted"})
    tape.add("status", {"status": "succeeded", "fine_tuned_model": "rl:crafted"})
    return tape


def _rising(step: int) -> float:
    return 0.2 + 0.02 * step


HEALTHY_EVALS = {0: 0.2, 10: 0.35, 20: 0.5, 30: 0.6}


def rl_eval_falls() -> Tape:
    return _rl(30, reward=_rising, evals={0: 0.3, 10: 0.5, 20: 0.42, 30: 0.35})


def rl_length_drift() -> Tape:
    return _rl(30, reward=_rising, evals=HEALTHY_EVALS, length=lambda s: 8.0 + 0.5 * s)


def rl_zero_variance() -> Tape:
    return _rl(30, reward=_rising, evals=HEALTHY_EVALS, flat=3)


def rl_collapse() -> Tape:
    return _rl(30, reward=_rising, evals=HEALTHY_EVALS,
               winner=lambda s, g: "c011a95ec011" if s > 24 else f"{s:06x}{g:06x}")


def _sft(steps: int, *, loss: Callable[[int], float], validation: dict[int, float]) -> Tape:
    tape = Tape("sft")
    tape.event("sft.training.started", {"total_steps": steps})
    for step in range(1, steps + 1):
        tape.metric("train.loss", step, loss(step))
        if step in validation:
            tape.metric("val.loss", step, validation[step])
    tape.event("sft.training.finish", {"steps": steps, "total_steps": steps})
    tape.event("sft.job.completed", {"fine_tuned_model": "sft:crafted"})
    tape.add("status", {"status": "succeeded", "fine_tuned_model": "sft:crafted"})
    return tape


def sft_overfitting() -> Tape:
    return _sft(100, loss=lambda s: 2.0 - 0.017 * s, validation={20: 1.5, 40: 1.2, 60: 1.1, 80: 1.25, 100: 1.4})


def sft_flat_loss() -> Tape:
    return _sft(40, loss=lambda s: 2.0 + (0.01 if s % 2 else -0.01), validation={20: 2.0, 40: 2.0})


def _gepa(*, budget: int, trials: list[float], best: list[float], held_out: tuple[float, float] | None,
          proposals: int) -> Tape:
    """A GEPA search: its baseline on the search's seeds, ``trials`` (one per 8 rollouts), ``proposals``
    proposals, the best-so-far ``best`` (one per trial), and the held-out (baseline, best) scores if given."""
    tape = Tape("prompt_learning", algorithm="gepa")
    tape.event("prompt.learning.gepa.start", {"rollout_budget": budget})
    tape.event("prompt.learning.candidate.evaluated", {"candidate_index": 0, "is_baseline": True, "score": best[0]})
    for i, score in enumerate(trials, start=1):
        if i <= proposals:
            tape.event("gepa.transformation.proposed", {"parent": 0, "operator": "mutation"})
        tape.metric("gepa.trial.score", 8 * i, score)
        tape.metric("gepa.best_score", 8 * i, best[i])
    if held_out is not None:
        seeds = list(range(100, 132))
        tape.event("prompt.learning.validation.summary", {"baseline": {"accuracy": held_out[0], "seeds": seeds},
                                                          "results": [{"accuracy": held_out[1], "seeds": seeds}]})
    tape.event("prompt.learning.completed", {"finish_reason": "budget_exhausted", "rollouts_completed": budget})
    tape.add("status", {"status": "succeeded"})
    return tape


def pl_search_only_gain() -> Tape:
    return _gepa(budget=48, trials=[0.6, 0.7, 0.8, 0.75, 0.85, 0.8], best=[0.5, 0.6, 0.7, 0.8, 0.8, 0.8, 0.8],
                 held_out=(0.7, 0.66), proposals=6)


def pl_few_proposals() -> Tape:
    return _gepa(budget=8, trials=[0.6], best=[0.5, 0.6], held_out=None, proposals=1)


#: recording name -> the one warning code it shows
EXPECTED = {
    "rl_eval_falls": "rl.eval_falls", "rl_length_drift": "rl.length_drift", "rl_zero_variance": "rl.zero_variance",
    "rl_collapse": "rl.collapse", "sft_overfitting": "sft.overfitting", "sft_flat_loss": "sft.flat_loss",
    "pl_search_only_gain": "pl.search_only_gain", "pl_few_proposals": "pl.few_proposals",
}
_TAPES: dict[str, Callable[[], Tape]] = {
    "rl_eval_falls": rl_eval_falls, "rl_length_drift": rl_length_drift, "rl_zero_variance": rl_zero_variance,
    "rl_collapse": rl_collapse, "sft_overfitting": sft_overfitting, "sft_flat_loss": sft_flat_loss,
    "pl_search_only_gain": pl_search_only_gain, "pl_few_proposals": pl_few_proposals,
}


def write_recordings(folder: Path) -> Path:
    """Write every crafted recording into ``folder`` (``<name>.jsonl``); returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, make in _TAPES.items():
        (folder / f"{name}.jsonl").write_text(make().text(), encoding="utf-8")
    return folder
