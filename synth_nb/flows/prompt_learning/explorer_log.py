"""What a prompt-learning job's events said, kept per kind: the input of ``explorer_events.explore``.

Parsers for the documented shapes (``text_replacements`` under ``object`` or ``object.data``,
``instance_scores`` with or without ``seeds``, ``best_prompt`` / ``template`` sections) live here too, so
``explorer_events`` only joins what was said into candidates and proposals.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping
from typing import Any

from synth_nb.flows.prompt_learning.explorer_model import Candidate, MiproSearch, MiproTrial, messages_of
from synth_nb.flows.prompt_learning.prompt_diff import Message
from synth_nb.flows.prompt_learning.scores import baseline_in, instance_values, score_value
from synth_nb.records import UNPARSED_EVENT_TYPE

__all__ = ["EXPLORER_EVENT_TYPES", "PROPOSAL_METRIC", "SearchLog", "apply_replacements", "candidate_from",
           "field_of", "fill_missing", "integer", "number", "replacements_of", "score_of", "sections_of"]

EXPLORER_EVENT_TYPES = frozenset({
    "prompt.learning.candidate.evaluated", "prompt.learning.final.results", "prompt.learning.best.prompt",
    "prompt.learning.top.prompt.content", "prompt.learning.validation.scored", "prompt.learning.rollouts.start",
    "prompt.learning.progress", "gepa.transformation.proposed", "prompt.learning.proposal.scored",
    "prompt.learning.gepa.merge", "prompt.learning.gepa.start", "prompt.learning.gepa.complete",
    "prompt.learning.mipro.complete", "prompt.learning.completed", "mipro.job.started",
    "mipro.instruction.proposed", "mipro.trial.complete", "mipro.fulleval.complete", "mipro.topk.evaluated",
    "mipro.baseline.test", "mipro.job.completed", "learning.policy.gepa.job.completed",
    "learning.policy.mipro.job.completed", UNPARSED_EVENT_TYPE,
})
#: GEPA's per-proposal minibatch score (step = proposal number)
PROPOSAL_METRIC = "gepa.transformation.mean_score"
#: the events after which the search is over (the last two: later releases' names for the job's end)
_DONE = frozenset({"prompt.learning.final.results", "prompt.learning.gepa.complete",
                   "prompt.learning.mipro.complete", "prompt.learning.completed",
                   "learning.policy.gepa.job.completed", "learning.policy.mipro.job.completed"})
#: events that each announce one proposal (GEPA's transformation, MIPRO's instruction), read by one reader:
#: parent, ``transformation_id``, ``text_replacements``, ``proposer_input`` / ``proposer_output``
_PROPOSED = frozenset({"gepa.transformation.proposed", "mipro.instruction.proposed"})
_PROPOSAL_NUMBER = re.compile(r"proposal\[(\d+)\]")


def number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def field_of(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def seed_scores(entry: Mapping[str, Any]) -> dict[Any, float]:
    """``instance_scores`` (or ``instance_rewards``) keyed by ``seeds`` (by position when the backend sends no
    seeds)."""
    scores = instance_values(entry)
    if scores is None:
        score = entry.get("score")
        scores = instance_values(score) if isinstance(score, Mapping) else None
    if not isinstance(scores, list):
        return {}
    seeds = entry.get("seeds")
    keys = seeds if isinstance(seeds, list) and len(seeds) == len(scores) else [f"#{i}" for i in range(len(scores))]
    return {k: float(v) for k, v in zip(keys, scores, strict=True) if number(v) is not None}


def replacements_of(entry: Mapping[str, Any]) -> tuple[dict[str, Any], ...] | None:
    """``text_replacements`` under ``object`` or ``object.data`` (both spellings occur), else None."""
    obj = entry.get("object")
    for node in (obj, obj.get("data") if isinstance(obj, Mapping) else None, entry.get("transformation_dict")):
        if isinstance(node, Mapping) and isinstance(node.get("text_replacements"), list):
            return tuple(dict(r) for r in node["text_replacements"] if isinstance(r, Mapping))
    return None


def sections_of(entry: Mapping[str, Any]) -> tuple[Message, ...] | None:
    for node in (entry.get("template"), entry.get("best_prompt"), (entry.get("object") or {}).get("data")
                 if isinstance(entry.get("object"), Mapping) else None):
        if isinstance(node, Mapping):
            found = messages_of(node.get("sections") or node.get("prompt_sections"))
            if found:
                return found
    return None


def apply_replacements(base: tuple[Message, ...], replacements: Iterable[Mapping[str, Any]]) -> tuple[Message, ...]:
    """The baseline with each replacement's ``new_text`` in the message of its role (``old_text`` picks one)."""
    out = list(base)
    for r in replacements:
        role, new = str(r.get("apply_to_role", "system")), str(r.get("new_text", ""))
        hits = [i for i, m in enumerate(out) if m.role == role]
        exact = [i for i in hits if r.get("old_text") is not None and out[i].content == r.get("old_text")]
        for i in (exact or hits)[:1]:
            out[i] = Message(out[i].role, new, out[i].name)
    return tuple(out)


class SearchLog:
    """What the events said, kept per kind until ``build`` joins it into candidates and proposals."""

    def __init__(self) -> None:
        self.live: dict[int, tuple[int, dict[str, Any]]] = {}
        self.final: dict[str, Any] = {}
        self.best: dict[str, Any] = {}
        self.tops: list[dict[str, Any]] = []
        self.validation: list[dict[str, Any]] = []
        self.proposed: list[tuple[int, dict[str, Any]]] = []
        self.scored: dict[int, dict[str, Any]] = {}
        self.merges: list[tuple[int, dict[str, Any]]] = []
        self.progress: list[tuple[int, int]] = []
        self.seeds: list[Any] = []
        self.algorithm: str | None = None
        self.mipro: MiproSearch | None = None
        self.topk: list[dict[str, Any]] = []
        self.done = False
        self.metric_scores: dict[int, tuple[float, dict[str, Any]]] = {}
        #: items the backend sent that could not be read as events (kept as ``unparsed`` events)
        self.unparsed = 0

    def add(self, seq: int, etype: str, data: dict[str, Any], message: str) -> None:
        self.done |= etype in _DONE
        if etype in _PROPOSED and integer(data.get("instruction_id")) != 0:  # MIPRO's instruction 0 is the seed's
            self.proposed.append((seq, data))
        self.unparsed += etype == UNPARSED_EVENT_TYPE
        if etype.startswith("mipro.") or etype == "prompt.learning.mipro.complete":
            self.algorithm = "mipro"
            self._mipro(seq, etype, data)
        elif etype == "prompt.learning.gepa.start":
            self.algorithm = "gepa"
        elif etype == "prompt.learning.candidate.evaluated" and integer(data.get("candidate_index")) is not None:
            self.live[int(data["candidate_index"])] = (seq, data)
        elif etype == "prompt.learning.final.results":
            self.final = data
        elif etype == "prompt.learning.best.prompt":
            self.best = data
        elif etype == "prompt.learning.top.prompt.content":
            self.tops.append(data)
        elif etype == "prompt.learning.validation.scored":
            base = baseline_in(etype, data, message)  # a baseline may be named only in the message
            self.validation.append({**data, "is_baseline": True, "accuracy": base} if base is not None else data)
        elif etype == "prompt.learning.rollouts.start":
            seeds = data.get("validation_seeds") or data.get("online_pool")
            self.seeds = list(seeds) if isinstance(seeds, list) else self.seeds
        elif etype == "prompt.learning.progress" and integer(data.get("rollouts_completed")) is not None:
            self.progress.append((seq, int(data["rollouts_completed"])))
        elif etype == "prompt.learning.proposal.scored":
            match = _PROPOSAL_NUMBER.search(message or "")
            number = integer(data.get("proposal")) or (int(match.group(1)) if match else len(self.scored) + 1)
            self.scored[number] = data
        elif etype == "prompt.learning.gepa.merge":
            self.merges.append((seq, data))

    def _mipro(self, seq: int, etype: str, data: dict[str, Any]) -> None:
        m = self.mipro = self.mipro or MiproSearch()
        if etype == "mipro.instruction.proposed" and integer(data.get("instruction_id")) is not None:
            m.instructions[int(data["instruction_id"])] = str(data.get("instruction_text", ""))
        elif etype == "mipro.trial.complete" and number(data.get("minibatch_score")) is not None:
            m.trials.append(MiproTrial(len(m.trials) + 1, float(data["minibatch_score"]), integer(data.get("iteration")),
                                       integer(data.get("instruction_index")), integer(data.get("demo_index")),
                                       integer(data.get("num_seeds") or data.get("num_instances"))))
        elif etype == "mipro.fulleval.complete":
            i, d, score = integer(data.get("instruction_index")), integer(data.get("demo_index")), number(data.get("score"))
            if i is not None and d is not None and score is not None:
                m.full_evals[(i, d)] = score
            if integer(data.get("candidate_index")) is not None:
                self.live[int(data["candidate_index"])] = (seq, {**data, "origin": data.get("origin") or (
                    "seed" if data["candidate_index"] == 0 else "mipro")})
        elif etype == "prompt.learning.mipro.complete" and not self.best:
            self.best = data
        elif etype == "mipro.topk.evaluated":
            self.topk.append(data)
        elif etype == "mipro.baseline.test":
            m.baseline_test = number(data.get("test_score", data.get("score")))
        elif etype == "mipro.job.completed" and integer(data.get("demo_sets")) is not None:
            m.demo_sets = int(data["demo_sets"])

    def rollouts_at(self, seq: int) -> int | None:
        i = bisect.bisect_right([s for s, _ in self.progress], seq)
        return self.progress[i - 1][1] if i else None


def score_of(entry: Mapping[str, Any]) -> float | None:
    """``score`` (a number, or ``{accuracy}``/``{reward}`` in optimized candidates), else the entry's own
    ``accuracy`` or reward (``scores.score_value``)."""
    score = entry.get("score")
    if isinstance(score, Mapping):
        return score_value(score)
    return number(score) if score is not None else score_value(entry)


def candidate_from(index: int, entry: Mapping[str, Any], stream: SearchLog, seq: int | None) -> Candidate:
    parents = tuple(p for p in (integer(x) for x in entry.get("parents") or []) if p is not None)
    origin = entry.get("origin") or ("seed" if entry.get("is_baseline") else "unknown")
    rollouts = integer(entry.get("rollouts"))
    return Candidate(
        index=index, origin=str(origin), parents=parents, generation=integer(entry.get("generation")),
        score=score_of(entry),
        heldout=number(entry.get("heldout_accuracy")), seed_scores=seed_scores(entry), messages=sections_of(entry),
        rollouts=rollouts if rollouts is not None else (stream.rollouts_at(seq) if seq is not None else None),
        minibatch_score=number(entry.get("minibatch_score")), instruction=integer(entry.get("instruction_index")),
        demo_set=integer(entry.get("demo_index")))


def fill_missing(into: Candidate, other: Candidate) -> None:
    """Keep what ``into`` knows; take what only ``other`` knows."""
    for name in ("generation", "score", "heldout", "messages", "rollouts", "minibatch_score", "instruction",
                 "demo_set"):
        if getattr(into, name) is None:
            setattr(into, name, getattr(other, name))
    into.parents = into.parents or other.parents
    into.seed_scores = into.seed_scores or other.seed_scores
    into.origin = into.origin if into.origin != "unknown" else other.origin
