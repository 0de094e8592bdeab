"""The names later synth-ai releases read, emitted beside the ones 0.2.24 reads (never instead of them).

From 0.4.12 the results writer reads a candidate's or a baseline's score as ``reward``
(``outcome_objectives.reward`` › ``reward`` › ``outcome_reward``) where the executors write ``accuracy``
(and per-seed ``instance_rewards`` where they write ``instance_scores``);
0.5.0 follows the GEPA proposal metric as ``gepa.transformation.mean_reward`` (``mean_score`` before);
0.3.9+ stop streaming at the first event they treat as terminal and print the status document they last
polled, whose results must therefore be there first (``runner``); their failure events are
``prompt.learning.<algorithm>.failed`` and, in the last pre-releases, ``learning.policy.<flow>.job.*``.
Every executor (replays included) goes through ``LocalJobContext``, which applies these in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CLIENT_TERMINAL_EVENTS", "METRIC_ALIASES", "ending_events", "with_later_names"]

#: metric name -> the later name stored beside it (same step and value)
METRIC_ALIASES = {"gepa.transformation.mean_score": "gepa.transformation.mean_reward"}

#: every event type some synth-ai release with ``train`` (0.2.24 to 0.5.x) stops streaming at
CLIENT_TERMINAL_EVENTS = frozenset({
    "sft.job.completed", "sft.job.failed", "rl.train.completed", "rl.train.failed", "rl.job.completed",
    "rl.job.failed", "workflow.completed", "workflow.failed", "training.completed", "training.failed",
    "prompt.learning.gepa.complete", "prompt.learning.gepa.failed", "prompt.learning.mipro.complete",
    "prompt.learning.mipro.failed", "gepa.complete", "gepa.failed", "mipro.complete", "mipro.failed",
    *(f"learning.policy.{flow}.job.{end}" for flow in ("gepa", "mipro", "rl", "sft")
      for end in ("completed", "failed")),
})


def _family(kind: str, algorithm: str | None) -> str:
    """``gepa``/``mipro`` for prompt learning (``gepa`` when unnamed), else the kind (``rl``, ``sft``)."""
    if kind == "prompt_learning":
        return algorithm if algorithm in ("gepa", "mipro") else "gepa"
    return kind


def ending_events(kind: str, algorithm: str | None, end: str) -> list[str]:
    """The later clients' names for a job's end (``completed`` or ``failed``), emitted after the server's own.

    A failed prompt-learning job also gets ``prompt.learning.<algorithm>.failed`` (0.4.x / 0.5.0 stop there;
    ``prompt.learning.failed`` alone left 0.5.0 at ``Final status: unknown``).
    """
    family = _family(kind, algorithm)
    names = [f"prompt.learning.{family}.failed"] if kind == "prompt_learning" and end == "failed" else []
    return [*names, f"learning.policy.{family}.job.{end}"]


def _reward_beside(entry: Any) -> Any:
    """``entry`` with ``reward`` = its ``accuracy`` (a number) and ``instance_rewards`` = its
    ``instance_scores`` (a list), each unless already there."""
    if not isinstance(entry, Mapping):
        return entry
    added: dict[str, Any] = {}
    value = entry.get("accuracy")
    if "reward" not in entry and isinstance(value, int | float) and not isinstance(value, bool):
        added["reward"] = value
    if "instance_rewards" not in entry and isinstance(entry.get("instance_scores"), list):
        added["instance_rewards"] = entry["instance_scores"]
    return {**entry, **added} if added else entry


def _each(items: Any, change: Any) -> Any:
    return [change(item) for item in items] if isinstance(items, list) else items


def _optimized(candidate: Any) -> Any:
    if not isinstance(candidate, Mapping):
        return candidate
    return {**candidate, "score": _reward_beside(candidate.get("score"))}


def with_later_names(type: str, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` of an event of ``type`` with the later names added (a new dict; ``data`` is not changed)."""
    if type == "prompt.learning.validation.scored":
        return dict(_reward_beside(data))
    if type == "prompt.learning.validation.summary":
        changes = {"baseline": _reward_beside(data.get("baseline")), "results": _each(data.get("results"), _reward_beside)}
    elif type == "prompt.learning.final.results":
        changes = {"attempted_candidates": _each(data.get("attempted_candidates"), _reward_beside),
                   "optimized_candidates": _each(data.get("optimized_candidates"), _optimized),
                   "validation": _each(data.get("validation"), _reward_beside)}
    else:
        return data
    return {**data, **{k: v for k, v in changes.items() if k in data}}
