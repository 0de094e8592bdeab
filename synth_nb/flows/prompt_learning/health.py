"""Prompt learning's run-health rules: a search that found less than its score says.

- a search-only gain: the best prompt beat the baseline by at least ``SEARCH_GAIN`` on the seeds the search
  ranks prompts by, but not on the held-out seeds it was scored on afterwards (``outcome.gains``: both
  scores, each with what it was measured on);
- too few proposals: the search used its budget (``budget_exhausted``) having proposed fewer than ``MIN_PROPOSALS`` prompts (counted from the
  proposal events; a backend that streams none says nothing here, as a trial is not always a proposal), so its
  budget bought too little to search with.
"""

from __future__ import annotations

from synth_nb.flows.artifacts import FinishedJob
from synth_nb.flows.health import HealthWarning, chart_points, figure
from synth_nb.flows.outcome import events_data
from synth_nb.flows.prompt_learning import outcome
from synth_nb.flows.prompt_learning.chart import CHART

__all__ = ["health"]

#: the least search-score gain that counts as one
SEARCH_GAIN = 0.02
#: fewer proposals than this is too few to call a search
MIN_PROPOSALS = 3
#: the backend's word for a search that ended because its budget ran out
BUDGET_SPENT = "budget_exhausted"
#: events that each announce one proposed prompt (GEPA's mutation, MIPRO's instruction candidate, the hosted
#: backend's scored proposal)
PROPOSAL_EVENTS = ("gepa.transformation.proposed", "mipro.instruction.proposed", "prompt.learning.proposal.scored")


def health(job: FinishedJob) -> list[HealthWarning]:
    found = [_search_only_gain(job), _few_proposals(job)]
    return [warning for warning in found if warning is not None]


def _search_only_gain(job: FinishedJob) -> HealthWarning | None:
    gains = outcome.gains(job)
    held = next((g for g in gains if g.held_out), None)
    search = next((g for g in gains if not g.held_out), None)
    if held is None or search is None:
        return None
    if search.result - search.baseline < SEARCH_GAIN or held.result > held.baseline:
        return None
    best = chart_points(job, CHART)["best"]
    reached = next((s for s, v in zip(best.steps, best.values, strict=True) if v >= best.values[-1]), None)
    found_at = f"; best so far reached it at {best.axis} = {reached}" if reached is not None else ""
    return HealthWarning(
        "pl.search_only_gain", "the best prompt wins on the search's seeds but not on held-out seeds",
        f"best {figure(search.result)} vs baseline {figure(search.baseline)} on {search.measured_on} "
        f"({search.result - search.baseline:+.4g}), but {figure(held.result)} vs {figure(held.baseline)} on "
        f"{held.measured_on} ({held.result - held.baseline:+.4g}){found_at}",
        ("best so far", "baseline (search)", "best prompt (held-out)", "baseline (held-out)"),
        (reached,) if reached is not None else ())


def _few_proposals(job: FinishedJob) -> HealthWarning | None:
    if job.status != "succeeded":
        return None
    counted = {etype: len(events_data(job, etype)) for etype in PROPOSAL_EVENTS}
    source = max(counted, key=counted.__getitem__)
    proposals = counted[source]
    if not proposals or proposals >= MIN_PROPOSALS:  # none streamed: this backend may not say, so nothing is said
        return None
    usage = outcome.usage(job)
    if usage.finish_reason != BUDGET_SPENT:  # a search stopped otherwise, or one that does not say, was not starved
        return None
    spent = f"{BUDGET_SPENT}: {usage.finish_detail}" if usage.finish_detail else BUDGET_SPENT
    return HealthWarning(
        "pl.few_proposals", "the budget bought too few proposals to search with",
        f"the search used its budget ({spent}) having made {proposals} proposal{'s' if proposals != 1 else ''} (fewer than "
        f"{MIN_PROPOSALS}); a larger rollout budget (or smaller evaluations per candidate) lets it try more prompts",
        (source,))
