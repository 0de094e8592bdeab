"""Every GEPA proposal says what decided it: its minibatch score beside its parent's on the same minibatch,
why it was kept or not, and what the proposer was asked and answered (GEPA's callbacks, as ``gepa.optimize``
calls them, into the events the explorer reads)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from synth_nb.local.executors.prompt_learning.proposers import EXCHANGE_CHARS, Proposer
from synth_nb.local.executors.prompt_learning.search_gepa import GepaTracker
from synth_nb.local.executors.prompt_learning.settings import ProposerSpec


class _Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def emit(self, type: str, message: str = "", data: dict[str, Any] | None = None, level: str = "info") -> None:
        self.events.append((type, data or {}))

    def metric(self, *args: Any, **kwargs: Any) -> None:
        pass


def _proposal(tracker: GepaTracker, proposer: Proposer, parent_scores: list[float], child_scores: list[float],
              failures: list[dict[str, Any]]) -> None:
    """One GEPA iteration: the parent on a minibatch, a rewrite, the child on the same minibatch."""
    tracker.on_candidate_selected({"candidate_idx": 0})
    tracker.on_evaluation_end({"scores": parent_scores, "candidate_idx": 0})
    text = proposer.rewrite("Classify.\nIntents:\n- card_swallowed", failures)
    tracker.on_proposal_end({"new_instructions": {"system_prompt": text}})
    tracker.on_evaluation_end({"scores": child_scores, "candidate_idx": None})
    if sum(child_scores) > sum(parent_scores):
        tracker.on_candidate_accepted({"new_candidate_idx": 1})
    else:
        tracker.on_candidate_rejected({})


def test_a_rejected_and_a_kept_proposal_say_why_with_the_proposers_exchange() -> None:
    ctx = _Recorder()
    proposer = Proposer(ProposerSpec())
    tracker = GepaTracker(ctx, SimpleNamespace(best_score=None, transformations_tried=0),  # type: ignore[arg-type]
                          SimpleNamespace(budgeted_done=8), [10, 11], "offline",  # type: ignore[arg-type]
                          {"system_prompt": "system"}, proposer=proposer)
    tracker.candidates = [SimpleNamespace(components={"system_prompt": "Classify."})]  # type: ignore[list-item]
    failed = [{"query": "The ATM ate my card " + "x" * 5000, "expected": "card_swallowed", "correct": False}]
    _proposal(tracker, proposer, [1.0, 0.0], [0.0, 0.0], failed)
    _proposal(tracker, proposer, [0.0, 0.0], [1.0, 0.0], failed)
    proposed = [d for t, d in ctx.events if t == "gepa.transformation.proposed"]
    scored = [d for t, d in ctx.events if t == "prompt.learning.proposal.scored"]
    assert [(d["accepted"], d["score"], d["parent_score"]) for d in scored] == [(False, 0.0, 0.5), (True, 0.5, 0.0)]
    assert scored[0]["reason"] == "minibatch score 0.000 did not beat its parent's 0.500 on the same minibatch"
    assert scored[1]["reason"].endswith("on the same minibatch: kept as candidate 1")
    first = proposed[0]
    assert first["proposer_input"].startswith("offline rewrite grounded on (query -> expected):\nThe ATM ate my card")
    assert len(first["proposer_input"]) == EXCHANGE_CHARS < first["proposer_input_chars"]  # cut, its length said
    assert first["transformation_text"].startswith(first["proposer_output"])  # the offline rewrite wrote the text
