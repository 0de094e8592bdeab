"""What one GRPO step's groups say about the run's health, as added fields of its ``rl.train.step`` event.

A client cannot see the rollouts behind a step's mean reward, yet three run-health warnings need them: how
long the completions were (a length that keeps growing while the reward rises is often the reward being
gamed), how many groups had no reward spread (all rewards equal: a zero advantage, so no learning signal)
and which completion won each group (the same text winning across many seeds is a collapsed policy). The
fields are small (one short hash and seed per group) so the event stays bounded.
"""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

__all__ = ["completion_hash", "group_signals"]

#: below this standard deviation a group's rewards count as all equal (``group_advantages`` is then zero)
ZERO_SPREAD = 1e-6


class _Sampled(Protocol):
    completion_ids: list[int]


def completion_hash(samples: Sequence[_Sampled]) -> str:
    """A short fingerprint of a rollout's sampled tokens (every turn), equal for equal completions."""
    tokens = ",".join(str(t) for sample in samples for t in sample.completion_ids)
    return hashlib.blake2b(tokens.encode(), digest_size=6).hexdigest()


def group_signals(results: Sequence[float | BaseException], records: Mapping[int, Sequence[_Sampled]],
                  group: int, seeds: Sequence[int]) -> dict[str, Any]:
    """``completion_tokens_mean`` (per rollout, every turn), ``groups`` scored, ``zero_variance_groups``, and per
    scored group its seed (``group_seeds``) and the fingerprint of its best rollout (``winning_completions``)."""
    lengths: list[int] = []
    scored_seeds: list[int] = []
    winners: list[str] = []
    flat = 0
    for g, seed in enumerate(seeds):
        ok = [k for k in range(g * group, (g + 1) * group)
              if k < len(results) and isinstance(results[k], float) and records.get(k)]
        if not ok:
            continue
        rewards = [float(results[k]) for k in ok]  # type: ignore[arg-type]
        lengths += [sum(len(s.completion_ids) for s in records[k]) for k in ok]
        flat += len(ok) > 1 and statistics.pstdev(rewards) < ZERO_SPREAD
        best = ok[rewards.index(max(rewards))]
        scored_seeds.append(seed)
        winners.append(completion_hash(records[best]))
    return {"completion_tokens_mean": round(statistics.fmean(lengths), 2) if lengths else None,
            "groups": len(winners), "zero_variance_groups": flat, "group_seeds": scored_seeds,
            "winning_completions": winners}
