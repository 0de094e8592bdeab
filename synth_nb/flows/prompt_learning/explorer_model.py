"""Why a prompt-learning run won, as plain data: candidates, lineage, the Pareto front, per-seed wins, diffs.

An ``Exploration`` is built from the events a backend streams (``explorer_events.explore``), so it works live,
after the job and on a re-attached job, for the hosted backend and the local one alike. What the stream
did not carry (a hosted GEPA run sends candidates only at the end, MIPRO trials without their
instruction) is left empty and said in ``notes`` rather than guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from synth_nb.flows.prompt_learning.prompt_diff import Message, MessageDiff, approx_tokens, prompt_diff

__all__ = ["Axis", "Candidate", "Exploration", "LineageNode", "MiproSearch", "MiproTrial", "Proposal", "SeedWins",
           "messages_of"]

#: what the Pareto view puts on its x axis: prompt length (≈ tokens) or rollouts spent when it was found
Axis = Literal["length", "rollouts"]


@dataclass
class Proposal:
    """One proposed change: a reflective rewrite of a parent, or a merge of several; accepted or not."""

    number: int
    kind: str
    parents: tuple[int, ...]
    minibatch_score: float | None = None
    accepted: bool | None = None
    candidate: int | None = None
    transformation_id: str | None = None
    operator: str | None = None
    #: ``[{apply_to_role, old_text, new_text}]`` as the backend sent them
    replacements: tuple[dict[str, Any], ...] = ()
    rollouts: int | None = None
    #: the parent as the backend named it, when that is no candidate index (e.g. ``"best"``)
    parent_label: str | None = None
    #: the parent's score on the same minibatch (what the proposal had to beat)
    parent_score: float | None = None
    #: why it was kept or not, as the backend says it
    reason: str | None = None
    #: what the proposer was asked (GEPA's reflection prompt) and its raw answer, as sent (possibly cut)
    proposer_input: str | None = None
    proposer_output: str | None = None

    def proposed_text(self) -> str | None:
        """The text the proposal would have put in place (its replacements' new texts)."""
        texts = [str(r.get("new_text") or "") for r in self.replacements]
        return "\n\n".join(texts) if texts else None


@dataclass
class Candidate:
    """A prompt the search kept and scored on its validation (Pareto) seeds."""

    index: int
    origin: str = "unknown"
    parents: tuple[int, ...] = ()
    generation: int | None = None
    #: mean score on the validation (Pareto) seeds: what the search ranks by
    score: float | None = None
    #: mean score on the held-out seeds, for the baseline and the top candidates
    heldout: float | None = None
    seed_scores: dict[Any, float] = field(default_factory=dict)
    messages: tuple[Message, ...] | None = None
    #: search rollouts used when the candidate was found
    rollouts: int | None = None
    proposal: Proposal | None = None
    minibatch_score: float | None = None
    instruction: int | None = None
    demo_set: int | None = None

    #: ``length`` of the messages it was counted for (the Pareto views ask for it thousands of times)
    _counted: tuple[Any, int | None] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def length(self) -> int | None:
        """The prompt's length in approximate tokens (words and punctuation), when its text is known."""
        if self._counted is None or self._counted[0] is not self.messages:
            count = sum(approx_tokens(m.content) for m in self.messages) if self.messages is not None else None
            self._counted = (self.messages, count)
        return self._counted[1]

    def text(self) -> str:
        return "\n\n".join(f"[{m.role}] {m.content}" for m in self.messages or ())


@dataclass
class LineageNode:
    """A candidate, the candidates made from it and the proposals from it that were rejected."""

    candidate: Candidate
    children: list[LineageNode] = field(default_factory=list)
    rejected: list[Proposal] = field(default_factory=list)


@dataclass(frozen=True)
class SeedWins:
    """Candidates × validation seeds: each cell's score and which candidates own each seed.

    A seed is owned by the candidates with the best score on it, unless every candidate scored the same
    (such a seed tells candidates apart no more than it is owned).
    """

    seeds: tuple[Any, ...]
    candidates: tuple[int, ...]
    scores: dict[tuple[int, Any], float]
    owners: dict[Any, frozenset[int]]

    def owned_by(self, index: int) -> list[Any]:
        return [seed for seed in self.seeds if index in self.owners.get(seed, frozenset())]


@dataclass(frozen=True)
class MiproTrial:
    number: int
    score: float
    iteration: int | None = None
    instruction: int | None = None
    demo_set: int | None = None
    num_seeds: int | None = None


@dataclass
class MiproSearch:
    """MIPRO's search space and what it tried: instructions × demo sets, trials, full evaluations."""

    instructions: dict[int, str] = field(default_factory=dict)
    demo_sets: int | None = None
    trials: list[MiproTrial] = field(default_factory=list)
    #: (instruction, demo set) -> full-evaluation score
    full_evals: dict[tuple[int, int], float] = field(default_factory=dict)
    chosen: tuple[int | None, int | None] | None = None
    chosen_test: float | None = None
    baseline_test: float | None = None

    def grid(self) -> dict[tuple[int, int], tuple[float, int]]:
        """(instruction, demo set) -> (mean minibatch score, number of trials), for trials that say both."""
        sums: dict[tuple[int, int], list[float]] = {}
        for t in self.trials:
            if t.instruction is not None and t.demo_set is not None:
                sums.setdefault((t.instruction, t.demo_set), []).append(t.score)
        return {key: (sum(v) / len(v), len(v)) for key, v in sums.items()}


@dataclass
class Exploration:
    """Everything the explorer shows about one prompt-learning job, computed from its events."""

    job_id: str
    algorithm: str | None
    candidates: list[Candidate]
    proposals: list[Proposal]
    baseline: int | None
    best: int | None
    seeds: tuple[Any, ...] = ()
    mipro: MiproSearch | None = None
    notes: list[str] = field(default_factory=list)
    finished: bool = False

    def candidate(self, index: int | None) -> Candidate | None:
        return next((c for c in self.candidates if c.index == index), None)

    # -- Pareto ----------------------------------------------------------------------------------
    def points(self, axis: Axis = "length") -> list[tuple[Candidate, float, float]]:
        """(candidate, x, score) for every candidate with a score and a known x."""
        out = []
        for c in self.candidates:
            x = c.length if axis == "length" else c.rollouts
            if c.score is not None and x is not None:
                out.append((c, float(x), c.score))
        return out

    def frontier(self, axis: Axis = "length") -> list[int]:
        """Candidates no other beats on both counts (higher score with a shorter prompt / fewer rollouts)."""
        best_so_far = float("-inf")
        front = []
        for c, _, score in sorted(self.points(axis), key=lambda p: (p[1], -p[2], p[0].index)):
            if score > best_so_far:
                front.append(c.index)
                best_so_far = score
        return front

    # -- per-seed wins -----------------------------------------------------------------------------
    def wins(self) -> SeedWins:
        scored = [c for c in self.candidates if c.seed_scores]
        known = {s for c in scored for s in c.seed_scores}
        seeds = [s for s in self.seeds if s in known]
        seeds += sorted(known - set(seeds), key=_seed_order)
        cells = {(c.index, s): v for c in scored for s, v in c.seed_scores.items()}
        owners: dict[Any, frozenset[int]] = {}
        for seed in seeds:
            values = {c.index: cells[(c.index, seed)] for c in scored if (c.index, seed) in cells}
            if values and max(values.values()) > min(values.values()):
                top = max(values.values())
                owners[seed] = frozenset(i for i, v in values.items() if v == top)
        return SeedWins(tuple(seeds), tuple(c.index for c in scored), cells, owners)

    # -- lineage ---------------------------------------------------------------------------------
    def lineage(self) -> list[LineageNode]:
        """Trees from the seed prompt: each candidate under its first parent; orphans are roots too."""
        nodes = {c.index: LineageNode(c) for c in self.candidates}
        roots = []
        for c in self.candidates:
            parent = nodes.get(c.parents[0]) if c.parents else None
            if parent is None or parent.candidate is c:
                roots.append(nodes[c.index])
            else:
                parent.children.append(nodes[c.index])
        for p in self.proposals:
            if p.accepted is False and p.parents and p.parents[0] in nodes:
                nodes[p.parents[0]].rejected.append(p)
        roots.sort(key=lambda n: (n.candidate.index != self.baseline, n.candidate.index))
        return roots

    # -- diffs -----------------------------------------------------------------------------------
    def diff(self, old: int | None, new: int | None) -> list[MessageDiff] | None:
        a, b = self.candidate(old), self.candidate(new)
        if a is None or b is None or a.messages is None or b.messages is None:
            return None
        return prompt_diff(a.messages, b.messages)

    def baseline_to_best(self) -> list[MessageDiff] | None:
        return self.diff(self.baseline, self.best)

    def parent_diff(self, index: int) -> list[MessageDiff] | None:
        c = self.candidate(index)
        return self.diff(c.parents[0], index) if c is not None and c.parents else None

    # -- tables ----------------------------------------------------------------------------------
    def rows(self) -> list[dict[str, Any]]:
        """One plain row per candidate (what ``candidates_df`` and the tables show)."""
        owned = self.wins()
        out = []
        for c in self.candidates:
            p = c.proposal
            out.append({
                "candidate": c.index, "origin": c.origin, "parents": list(c.parents), "generation": c.generation,
                "score": c.score, "heldout": c.heldout,
                "minibatch_score": p.minibatch_score if p is not None else c.minibatch_score,
                "accepted": p.accepted if p is not None else None, "prompt_tokens": c.length,
                "rollouts": c.rollouts, "seeds_owned": len(owned.owned_by(c.index)),
                "baseline": c.index == self.baseline, "best": c.index == self.best,
                "instruction": c.instruction, "demo_set": c.demo_set,
                "prompt": c.text() if c.messages is not None else None,
            })
        return out

    def rejected(self) -> list[Proposal]:
        """The proposals the search did not keep (``accepted`` False), in the order they were made."""
        return [p for p in self.proposals if p.accepted is False]

    def rejected_rows(self) -> list[dict[str, Any]]:
        """One plain row per rejected proposal, with the columns of ``rows()`` (no candidate index: it never
        became one) and why it was not kept, its proposer's input and raw output."""
        return [{"candidate": None, "origin": p.kind, "parents": list(p.parents), "generation": None, "score": None,
                 "heldout": None, "minibatch_score": p.minibatch_score, "accepted": False, "prompt_tokens": None,
                 "rollouts": p.rollouts, "seeds_owned": 0, "baseline": False, "best": False, "instruction": None,
                 "demo_set": None, "prompt": p.proposed_text(), "proposal": p.number,
                 "parent_minibatch_score": p.parent_score, "rejected_because": p.reason,
                 "proposer_input": p.proposer_input, "proposer_output": p.proposer_output}
                for p in self.rejected()]

    def frame(self, include_rejected: bool = False) -> Any:
        """``rows()`` as a pandas DataFrame; ``include_rejected`` adds a row per rejected proposal
        (``rejected_rows()``: candidate empty, accepted False, why it was not kept, the proposer's exchange)."""
        import pandas as pd

        columns = ["candidate", "origin", "parents", "generation", "score", "heldout", "minibatch_score",
                   "accepted", "prompt_tokens", "rollouts", "seeds_owned", "baseline", "best", "instruction",
                   "demo_set", "prompt"]
        if not include_rejected:
            return pd.DataFrame(self.rows(), columns=columns)
        extra = ["proposal", "parent_minibatch_score", "rejected_because", "proposer_input", "proposer_output"]
        return pd.DataFrame(self.rows() + self.rejected_rows(), columns=columns + extra)

    def summary_line(self) -> str:
        base, best = self.candidate(self.baseline), self.candidate(self.best)
        accepted = sum(1 for p in self.proposals if p.accepted)
        line = (f"{(self.algorithm or 'prompt learning').upper()} {self.job_id}: {len(self.candidates)} candidates, "
                f"{len(self.proposals)} proposals ({accepted} accepted)")
        if base is not None and best is not None and base.score is not None and best.score is not None:
            line += f"; search score: baseline {base.score:.3f} → best #{best.index} {best.score:.3f}"
        return line

    def best_note(self) -> str:
        """How "best" was chosen, and the held-out ranking where it disagrees with the search's."""
        text = (f"Best (#{self.best}) is the candidate the job picked: the highest search score, measured on the "
                "validation seeds during the search. Held-out scores are measured afterwards, on seeds the search "
                "never saw." if self.best is not None else
                "Scores: search score on the validation seeds; held-out score on seeds the search never saw.")
        scored = [c for c in self.candidates if c.heldout is not None]
        top = max(scored, key=lambda c: (c.heldout, -c.index), default=None)
        best = self.candidate(self.best) if self.best is not None else None
        if top is not None and best is not None and top.index != best.index and (best.heldout or 0) < (top.heldout or 0):
            held = f"{best.heldout:.3f}" if best.heldout is not None else "not measured"
            text += (f" By held-out score #{top.index} ranks first ({top.heldout:.3f}; #{best.index}: {held}).")
        return text


def _seed_order(seed: Any) -> tuple[int, Any]:
    return (0, seed) if isinstance(seed, int | float) else (1, str(seed))


def messages_of(sections: Sequence[Any] | None) -> tuple[Message, ...] | None:
    """``[{role, name?, content}]`` (a ``best_prompt``'s sections) as messages; None when not a list."""
    if not isinstance(sections, list | tuple):
        return None
    out = []
    for s in sections:
        if isinstance(s, dict):
            content = s.get("content", s.get("pattern", ""))
            out.append(Message(str(s.get("role", "system")), str(content or ""),
                               str(s["name"]) if s.get("name") is not None else None))
    return tuple(out)
