"""An estimate of what a job will take, labelled as one: rollouts or tokens, wall time and cost.

The flow says what the job will do (``Flow.workload``: the search's and the held-out evaluation's rollouts
for prompt learning, steps x batch x group x turns plus evaluations for RL, tokens x epochs for SFT) and
what it cannot size before the run (``token_gaps``: the figure is then a floor, and the card names each
part). Tokens are what the job reports at the end: the policy's prompt and completion tokens of every
rollout (plus a proposer model's), or for SFT the training tokens the trainer counts. Wall time is a rough
figure from one dry rollout's latency and the concurrency; cost comes from the model catalogue's price,
and only when it knows one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from synth_nb.flows.base import Workload
from synth_nb.flows.catalogue import price_of
from synth_nb.job.progress import format_duration
from synth_nb.pipeline.dry_rollout import DryRollout
from synth_nb.pipeline.target import Target

__all__ = ["Estimate", "estimate"]


@dataclass(frozen=True)
class Estimate:
    """Figures derived from the config and one dry rollout; none of them is a measurement of the job."""

    workload: Workload
    tokens: int | None = None
    tokens_how: str = ""
    wall_seconds: float | None = None
    wall_how: str = ""
    cost: str = "unknown"
    #: what the figures are derived from, said in the heading
    basis: str = "the config"
    #: True when the token figure leaves out parts that cannot be sized before the run (a floor)
    tokens_floor: bool = False

    def lines(self) -> list[str]:
        w = self.workload
        out = [f"estimate (from {self.basis}, not a measurement):"]
        if w.rollouts is not None:
            out.append(f"  rollouts: {w.rollouts:,} = {w.formula}")
        elif w.formula and w.tokens is None:
            out.append(f"  rollouts: unknown ({w.formula})")
        tokens = "unknown" if self.tokens is None else (
            f"at least ~{self.tokens:,}" if self.tokens_floor else f"~{self.tokens:,}")
        out.append(f"  tokens: {tokens}" + (f" ({self.tokens_how})" if self.tokens_how else ""))
        out += [f"  not estimated: {gap}" for gap in w.token_gaps if self.tokens is not None]
        wall = format_duration(self.wall_seconds) if self.wall_seconds is not None else "unknown"
        out.append(f"  wall time: {wall}" + (f" ({self.wall_how})" if self.wall_how else ""))
        out.append(f"  cost: {self.cost}")
        return out


def _tokens(w: Workload, dry: DryRollout | None, target: Target) -> tuple[int | None, str]:
    if target.is_embedded and w.embedded_tokens is not None:
        return w.embedded_tokens, w.embedded_tokens_how
    if w.tokens is not None:
        return w.tokens, w.formula
    per_rollout = dry.tokens if dry is not None and dry.ok else None
    if w.rollouts is None or per_rollout is None or dry is None:
        return None, "needs a bounded rollout count and a dry rollout that reports token usage"
    if w.reply_tokens is not None and dry.prompt_tokens is not None:
        per_rollout = dry.prompt_tokens + w.reply_tokens
        return w.rollouts * per_rollout, (f"{w.rollouts:,} rollouts x ({dry.prompt_tokens:,} prompt tokens in the "
                                          f"dry rollout + {w.reply_tokens:,} reply tokens, the reply cap: training "
                                          "changes how long replies are)")
    return w.rollouts * per_rollout, (f"{w.rollouts:,} rollouts x {per_rollout:,} prompt and completion tokens "
                                      "in the dry rollout")


def _wall(w: Workload, dry: DryRollout | None) -> tuple[float | None, str]:
    if dry is None or not dry.ok or dry.latency_ms is None:
        return None, "no dry rollout to time" if w.tokens is None else "SFT has no dry run to time"
    if w.rollouts is None:
        return None, "the rollout count is not bounded"
    concurrency = max(1, w.concurrency or 1)
    waves = math.ceil(w.rollouts / concurrency)
    seconds = waves * dry.latency_ms / 1000
    return seconds, (f"a rough figure: {w.rollouts:,} rollouts / {concurrency} at a time x "
                     f"{dry.latency_ms:.0f} ms per dry rollout; a warm or loaded machine, the search's and "
                     "the training's own work move it")


def _cost(w: Workload, tokens: int | None, target: Target) -> str:
    if target.is_embedded:
        return "$0 (the embedded backend runs on this machine)"
    price = price_of(w.model)
    if price is None:
        return f"unknown (the model catalogue has no price for {w.model or 'this model'})"
    if tokens is None:
        return "unknown (the token count is unknown)"
    prompt, completion = price
    high = tokens * max(prompt, completion) / 1e6
    low = tokens * min(prompt, completion) / 1e6
    floor = "at least " if w.token_gaps else ""
    return f"{floor}${low:,.2f}-${high:,.2f} ({tokens:,} tokens at ${prompt:g}/${completion:g} per million)"


def estimate(workload: Workload, dry: DryRollout | None, target: Target) -> Estimate:
    """Combine what the flow declares with the dry rollout's latency and the catalogue's prices."""
    tokens, tokens_how = _tokens(workload, dry, target)
    wall, wall_how = _wall(workload, dry)
    basis = "the config and one dry rollout" if dry is not None and dry.ok else (
        "the config and its data" if workload.tokens is not None else "the config")
    return Estimate(workload, tokens, tokens_how, wall, wall_how, _cost(workload, tokens, target), basis,
                    tokens_floor=bool(workload.token_gaps))
