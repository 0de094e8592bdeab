"""How a prompt search spends its rollouts on prompts it lengthens, for the pre-flight estimate.

A prompt search scores prompts that its proposals make longer: a rollout of a prompt ``k`` proposals deep
costs about the baseline prompt's tokens plus ``k`` times what one proposal adds, and MIPRO's demos add
their own. The flow describes its schedule (a ``PromptSearch``); the estimate multiplies the ``SearchMix``
it gives by what one dry proposal of the job showed (``pipeline.dry_rollout``): tokens per rollout before
and after one proposal, the proposer's tokens per call and how long a batch took.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["PromptSearch", "SearchMix"]


@dataclass(frozen=True)
class SearchMix:
    """A search's rollouts weighted by how long their prompts are, in units a dry proposal measures."""

    #: the sum over rollouts of how many proposals deep their prompt is (0 for the baseline prompt)
    proposal_rollouts: float
    #: the sum over rollouts of how many demos their prompt carries (MIPRO)
    demo_rollouts: float
    #: calls of the proposer (or meta) model
    proposer_calls: float
    #: the schedule and its assumptions, in words, for the card
    how: str
    #: prompts the search scores for the first time (None: one per proposer call; MIPRO: each trial's new
    #: pair of an instruction and a demo set)
    new_prompts: float | None = None
    #: first batches of text the dry proposal did not write, in units of its first proposal (MIPRO: its new
    #: instructions, each written from rollouts the dry proposal grounded itself on only in part); each takes
    #: what the dry run's first proposal's batch took beyond the pace (a policy that reads the prompt's new
    #: text, such as the offline one embedding its phrases, pays for it on first sight)
    new_texts: float = 0.0
    #: how ``new_texts`` was counted, for the card
    new_texts_how: str = ""

    @property
    def first_scored(self) -> float:
        return self.proposer_calls if self.new_prompts is None else self.new_prompts


class PromptSearch(Protocol):
    """A flow's prompt-search schedule: what its dry proposal needs, and the mix it then gives."""

    #: the seeds the dry proposal scores the baseline on, and how many of those rollouts one proposal
    #: grounds itself on, as the job's proposals do (a GEPA minibatch, MIPRO's half of the grounding pool)
    @property
    def seeds(self) -> tuple[int, ...]: ...

    @property
    def minibatch(self) -> int: ...

    #: demos a new prompt of the search carries (MIPRO's demo sets; 0 for GEPA)
    @property
    def demos(self) -> int: ...

    #: rollouts the job runs at the same time
    @property
    def concurrency(self) -> int: ...

    def mix(self, accepted: bool, solved: float | None = None) -> SearchMix:
        """The mix when proposals are accepted as the dry one was (``accepted``: it scored better than
        the baseline on its seeds), or about half of them when it was not; ``solved`` is the share of
        rollouts the baseline gets right (a search proposes nothing from a batch it solves whole)."""
        ...
