"""What a finished prompt-learning job reports it used and gained (``Flow.usage``, ``Flow.gains``).

Used: ``prompt.learning.completed`` (0.2.24's final summary reads it too): the search's rollouts and the
held-out ones after it, the policy's and the proposer's tokens (``token_count_total``, else 0.2.24's prompt +
completion + unknown rollout tokens), the cost (``billing.end``'s total first),
and ``finish_reason``; a ``budget_exhausted`` says how much of which budget. A backend that reports no
reason but ``mipro.optimization.exhausted`` (0.2.24) or a later release's ``*.termination.triggered`` is read
too. Gained: two scores, each with what it was measured on, never one for the other: the held-out score
(the baseline and the chosen prompt scored after the search on the test pool) and the search score (the
seeds the search ranks candidates on).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from synth_nb.flows.artifacts import FinishedJob
from synth_nb.flows.chart import ChartData, number
from synth_nb.flows.outcome import Gain, Usage, count_of, events_data, reported_usage
from synth_nb.flows.prompt_learning.chart import CHART

__all__ = ["gains", "usage"]

_COMPLETED = "prompt.learning.completed"
#: events that name the rollout budget the search worked to
_BUDGET = (("prompt.learning.progress", "rollouts_total"), ("prompt.learning.gepa.start", "rollout_budget"),
           ("mipro.job.started", "max_rollouts"), ("mipro.iteration.start", "max_rollouts"))
#: events whose data hold the seeds the held-out scores were measured on
_HELD_OUT = ("prompt.learning.heldout.start", "prompt.learning.validation.summary", "mipro.baseline.test")
#: events that score a candidate on the search's seeds: the type and the words for those seeds
_SEARCH_SEEDS = {"prompt.learning.candidate.evaluated": "validation seeds", "mipro.fulleval.complete":
                 "online-pool seeds"}


def _last(job: FinishedJob, *types: str) -> Mapping[str, Any]:
    found = events_data(job, *types)
    return found[-1] if found else {}


def usage(job: FinishedJob) -> Usage:
    base = reported_usage(job)
    done = _last(job, _COMPLETED)
    search, held = count_of(done.get("rollouts_completed")), count_of(done.get("heldout_rollouts")) or 0
    rollouts, how = base.rollouts, ""
    if search is not None:
        rollouts, how = search + held, f"{search:,} search + {held:,} held-out" if held else f"{search:,} search"
    tokens, tokens_how = count_of(done.get("token_count_total")), ""
    parts = [count_of(done.get(f"rollouts_{kind}_tokens")) for kind in ("prompt", "completion", "unknown")]
    if tokens is None and any(p is not None for p in parts):  # 0.2.24's sum: prompt + completion + unknown
        tokens = sum(p or 0 for p in parts)
        tokens_how = f"prompt {parts[0] or 0:,}, completion {parts[1] or 0:,}, unknown {parts[2] or 0:,}"
    elif tokens is not None and count_of(done.get("token_count_rollouts")) is not None:
        tokens_how = (f"policy {count_of(done.get('token_count_rollouts')) or 0:,}, "
                      f"proposer {count_of(done.get('token_count_mutation')) or 0:,}")
    cost = number(_last(job, "prompt.learning.billing.end").get("total_usd"), done.get("total_usd"), base.cost_usd)
    reason = base.finish_reason
    if reason is None:
        triggered = next((e.data for e in reversed(job.events[-50:]) if e.type.endswith(".termination.triggered")), None)
        reason = next((str(triggered[k]) for k in ("reason", "condition", "termination_reason")
                       if isinstance(triggered, Mapping) and triggered.get(k)), None)
        if reason is None and events_data(job, "mipro.optimization.exhausted"):
            reason = "budget_exhausted"
    detail = base.finish_detail
    if reason == "budget_exhausted" and not detail:
        budget = next((count_of(_last(job, t).get(k)) for t, k in _BUDGET if count_of(_last(job, t).get(k))), None)
        used = search if search is not None else base.rollouts
        if budget is not None and used is not None:
            detail = f"{used:,} of {budget:,} rollouts"
    return replace(base, rollouts=rollouts, rollouts_how=how, tokens=tokens if tokens is not None else base.tokens,
                   tokens_how=tokens_how, cost_usd=cost, finish_reason=reason, finish_detail=detail)


def _held_out_seeds(job: FinishedJob) -> str:
    for etype in _HELD_OUT:
        data = _last(job, etype)
        seeds = data.get("seeds") if "seeds" in data else (data.get("baseline") or {}).get("seeds") \
            if isinstance(data.get("baseline"), Mapping) else None
        if isinstance(seeds, list) and seeds:
            split = data.get("split")
            return f"{len(seeds)} held-out seeds" + (f" ({split} split)" if isinstance(split, str) and split else "")
    return "held-out seeds"


def _search_seeds(job: FinishedJob) -> str:
    for etype, words in _SEARCH_SEEDS.items():
        data = _last(job, etype)
        count = count_of(data.get("num_seeds")) or (len(data["seeds"]) if isinstance(data.get("seeds"), list) else None)
        if count:
            return f"{count} {words}"
    return "the search's seeds"


def gains(job: FinishedJob) -> list[Gain]:
    """The held-out score (after the search) first, then the search score; each only when both ends are known."""
    chart = ChartData(CHART)
    chart.extend(job.metrics, job.events)
    refs = chart.references
    out = []
    if "heldout_baseline" in refs and "heldout_best" in refs:
        out.append(Gain("held-out score", refs["heldout_baseline"], refs["heldout_best"], True, _held_out_seeds(job),
                        held_out=True))
    best = chart.series["best"].xy()[1]
    if "baseline" in refs and len(best):
        out.append(Gain("search score", refs["baseline"], float(best[-1]), True, _search_seeds(job)))
    return out
