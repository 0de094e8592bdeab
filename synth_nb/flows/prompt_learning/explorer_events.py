"""Fold a prompt-learning job's events into an ``Explorer``.

Reads the shapes the hosted backend documents: ``gepa.transformation.proposed`` (parent, operator,
``text_replacements``), ``prompt.learning.proposal.scored``, ``…validation.scored``, ``…best.prompt``,
``…top.prompt.content``, ``…final.results`` (attempted and optimized candidates), the ``mipro.*`` trial,
full-evaluation and top-k events, and the ``gepa.transformation.mean_score`` metric. The local backend
also sends each candidate as it is found (``prompt.learning.candidate.evaluated``, MIPRO's
``mipro.fulleval.complete``) with its parents, per-seed scores and prompt, so its explorer is complete
while the job runs; a hosted run's candidates arrive with ``final.results``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from synth_nb.flows.prompt_learning.explorer import Explorer
from synth_nb.flows.prompt_learning.explorer_log import (
    EXPLORER_EVENT_TYPES,
    PROPOSAL_METRIC,
    SearchLog,
    apply_replacements,
    candidate_from,
    field_of,
    fill_missing,
    integer,
    number,
    replacements_of,
    sections_of,
)
from synth_nb.flows.prompt_learning.explorer_model import Candidate, Exploration, Proposal
from synth_nb.flows.prompt_learning.prompt_diff import Message
from synth_nb.flows.prompt_learning.scores import score_value
from synth_nb.records import UNPARSED_EVENT_TYPE

__all__ = ["EXPLORER_EVENT_TYPES", "PROPOSAL_METRIC", "explore"]


#: the longest proposer text or reason kept from an event (a backend may send any length)
_MAX_TEXT = 8000


def _text(value: Any) -> str | None:
    return value[:_MAX_TEXT] if isinstance(value, str) and value else None


class _Join:
    """Joins a ``SearchLog`` into the candidates, proposals, baseline and best of an ``Explorer``."""

    def __init__(self, stream: SearchLog) -> None:
        self.s = stream
        self.cands: dict[int, Candidate] = {}
        self.pending: dict[int, tuple[dict[str, Any], ...]] = {}
        self.ranked: dict[int, int] = {}
        self.baseline: int | None = None
        self.best: int | None = None

    def candidates(self) -> None:
        """Candidates as they were found (local), then those of ``final.results`` (hosted: only there)."""
        for index, (seq, data) in sorted(self.s.live.items()):
            self.cands[index] = candidate_from(index, data, self.s, seq)
        attempted = [e for e in self.s.final.get("attempted_candidates") or [] if isinstance(e, Mapping)]
        numbered = any("candidate_index" in e for e in attempted) or bool(self.cands)
        entries, offset = self._entries(attempted, numbered)
        for position, entry in entries:
            if position is None:
                continue
            found = candidate_from(position, entry, self.s, None)
            if not numbered and not replacements_of(entry) and any(entry is a for a in attempted):
                found.origin = "seed"
            if position in self.cands:
                fill_missing(self.cands[position], found)
            else:
                self.cands[position] = found
            if replacements_of(entry):
                self.pending[position] = replacements_of(entry) or ()
        if offset and 0 not in self.cands:
            self.cands[0] = Candidate(0, origin="seed")
        seeds = [c.index for c in self.cands.values() if c.origin in ("seed", "baseline")]
        self.baseline = seeds[0] if seeds else (0 if 0 in self.cands else None)
        for c in self.cands.values():  # every MIPRO candidate is an (instruction, demo set) built from the seed
            if c.origin == "mipro" and not c.parents and self.baseline is not None:
                c.parents = (self.baseline,)

    def _entries(self, attempted: list[Mapping[str, Any]], numbered: bool
                 ) -> tuple[list[tuple[int | None, Mapping[str, Any]]], int]:
        """(candidate index, entry) pairs and how far positions are shifted (1: a seed prompt is added)."""
        has_seed = any(not (replacements_of(e) or ()) for e in attempted)
        offset = 0 if numbered or has_seed or not attempted else 1
        entries: list[tuple[int | None, Mapping[str, Any]]] = [
            (integer(e.get("candidate_index")) if numbered else i + offset, e) for i, e in enumerate(attempted)]
        if entries or self.cands:
            return self._with_optimized(entries), offset
        # a stream with only the top candidates (hosted GEPA's optimized list, MIPRO's top-k)
        optimized = sorted((e for e in self.s.final.get("optimized_candidates") or [] if isinstance(e, Mapping)),
                           key=lambda e: integer(e.get("rank")) or 0)
        tops = optimized or self._mipro_top()
        self.ranked = {integer(e.get("rank")) or i + 1: i + 1 for i, e in enumerate(tops)}
        return [(i + 1, e) for i, e in enumerate(tops)], 1

    def _with_optimized(self, entries: list[tuple[int | None, Mapping[str, Any]]]
                        ) -> list[tuple[int | None, Mapping[str, Any]]]:
        """``entries`` plus each optimized candidate that is none of them (0.2.24 lists both; a hosted run
        may send one attempted candidate, the seed, and the optimized ones only there)."""
        optimized = [e for e in self.s.final.get("optimized_candidates") or [] if isinstance(e, Mapping)]
        known = [(p, _identity(e)) for p, e in entries if p is not None]
        known += [(c.index, ("messages", c.messages)) for c in self.cands.values() if c.messages]
        taken = {p for p, _ in entries if p is not None} | set(self.cands)
        out = list(entries)
        for i, entry in enumerate(optimized):
            rank = integer(entry.get("rank")) or i + 1
            same = _identity(entry)
            match = integer(entry.get("candidate_index"))
            if match not in taken:
                match = next((p for p, ident in known if same is not None and ident == same), None)
            if match is None:
                match = max(taken, default=-1) + 1
                taken.add(match)
                out.append((match, entry))
            self.ranked.setdefault(rank, match)
        return out

    def _mipro_top(self) -> list[dict[str, Any]]:
        """``mipro.topk.evaluated`` as candidate entries (train score, held-out test score, instruction)."""
        ranked = sorted(self.s.topk, key=lambda t: integer(t.get("rank")) or 0)
        return [{"rank": t.get("rank"), "score": t.get("train_score"), "heldout_accuracy": t.get("test_score"),
                 "origin": "mipro", "instruction_index": (t.get("instruction_indices") or [None])[0]}
                for t in ranked]

    def prompts(self) -> None:
        """Prompt text for every candidate the stream lets us rebuild, the baseline first."""
        for top in self.s.tops:
            c = self.cands.get(integer(top.get("candidate_index")) or 0) if "candidate_index" in top else None
            if c is not None and c.messages is None:
                c.messages = sections_of(top)
        base = self.cands.get(self.baseline) if self.baseline is not None else None
        if base is not None and base.messages is None:
            base.messages = self._baseline_messages()
        if base is not None and base.messages is not None:
            for index, replacements in self.pending.items():
                c = self.cands[index]
                if c.messages is None and index != self.baseline:
                    c.messages = apply_replacements(base.messages, replacements)

    def _baseline_messages(self) -> tuple[Message, ...] | None:
        full = sections_of(self.s.best) or next((c.messages for c in self.cands.values() if c.messages), None)
        if full is None:
            return None
        originals: dict[str, str] = {}
        sources = [r for reps in self.pending.values() for r in reps]
        sources += [r for _, d in self.s.proposed if _parent(d.get("parent_id"), 0) == (0,)
                    for r in replacements_of(d) or ()]
        for r in sources:
            if r.get("old_text") is not None:
                originals.setdefault(str(r.get("apply_to_role", "system")), str(r["old_text"]))
        if not originals:  # nothing says what the seed prompt was
            return None
        return tuple(Message(m.role, originals.get(m.role, m.content), m.name) for m in full)

    def choose_best(self) -> None:
        index = integer(self.s.best.get("candidate_index"))
        if index is None:
            index = next((integer(t.get("candidate_index")) for t in self.s.tops if integer(t.get("rank")) == 1), None)
        if index is None and self.ranked:
            index = self.ranked.get(1)
        if index is None:
            wanted = sections_of(self.s.best)
            index = next((c.index for c in self.cands.values() if wanted and c.messages == wanted
                          and c.index != self.baseline), None)
        if index is None:
            scored = [c for c in self.cands.values() if c.score is not None]
            index = max(scored, key=lambda c: (c.score or 0.0, -c.index)).index if scored else None
        self.best = index if index in self.cands else None
        best = self.cands.get(self.best) if self.best is not None else None
        if best is not None and best.messages is None:
            best.messages = sections_of(self.s.best)

    def heldout(self) -> None:
        results = [r for r in (self.s.final.get("validation") or []) if isinstance(r, Mapping)]
        for entry in [*self.s.validation, *results]:
            accuracy = score_value(entry)
            if accuracy is None:
                continue
            if entry.get("is_baseline"):
                target = self.baseline
            elif "candidate_index" in entry:
                target = integer(entry.get("candidate_index"))
            else:
                rank = integer(entry.get("rank"))
                target = self.best if rank == 0 else (self.ranked.get(rank + 1) if rank is not None else None)
            c = self.cands.get(target) if target is not None else None
            if c is not None and c.heldout is None:
                c.heldout = accuracy
        base = self.cands.get(self.baseline) if self.baseline is not None else None
        if base is not None and base.heldout is None and self.s.mipro is not None:
            base.heldout = self.s.mipro.baseline_test

    def proposals(self) -> list[Proposal]:
        out: list[Proposal] = []
        for k, (seq, d) in enumerate(self.s.proposed, start=1):
            number = integer(str(d.get("transformation_id", "")).rpartition("_")[2]) or k
            operator = str(d.get("operator") or d.get("mutation_type") or "")
            kind = "merge" if any(w in operator.lower() for w in ("merge", "crossover")) else "reflection"
            parents = _parent(d.get("parent_id"), self.baseline)
            out.append(self._scored(Proposal(
                number, kind, parents, transformation_id=d.get("transformation_id"), operator=operator or None,
                replacements=replacements_of(d) or (), rollouts=self.s.rollouts_at(seq),
                parent_label=None if parents or d.get("parent_id") is None else str(d.get("parent_id")),
                proposer_input=_text(d.get("proposer_input")), proposer_output=_text(d.get("proposer_output")))))
        known = {p.number for p in out}
        for number in sorted(set(self.s.scored) - known):
            d = self.s.scored[number]
            out.append(self._scored(Proposal(number, "reflection", _parent(d.get("parent_id"), self.baseline))))
        for seq, d in self.s.merges:
            parents = tuple(p for p in (integer(x) for x in d.get("parent_ids") or []) if p is not None)
            out.append(Proposal(len(out) + 1, "merge", parents, accepted=bool(d.get("accepted")),
                                candidate=integer(d.get("candidate_index")), rollouts=self.s.rollouts_at(seq)))
        for p in out:
            self._link(p)
        by_id = {p.transformation_id: p for p in out if p.transformation_id}
        for p in out:  # a parent named by its transformation id is the candidate that proposal made
            made = by_id.get(p.parent_label or "")
            if made is not None and made.candidate is not None:
                p.parents, p.parent_label = (made.candidate,), None
        return out

    def _scored(self, p: Proposal) -> Proposal:
        d = self.s.scored.get(p.number, {})
        metric = self.s.metric_scores.get(p.number)
        p.minibatch_score = number(d.get("score")) if d else (metric[0] if metric else None)
        accepted = d.get("accepted") if d else (metric[1].get("accepted") if metric else None)
        p.accepted = accepted if isinstance(accepted, bool) else None
        p.candidate = integer(d.get("candidate_index")) if d else None
        p.parent_score = number(d.get("parent_score")) if d else None
        p.reason = _text(d.get("reason")) if d else None
        return p

    def _link(self, p: Proposal) -> None:
        if p.candidate is None and p.accepted is not False and p.replacements:
            texts = {(str(r.get("apply_to_role")), str(r.get("new_text"))) for r in p.replacements}
            p.candidate = next((c.index for c in self.cands.values() if c.index != self.baseline and c.proposal is None
                                and c.messages and texts <= {(m.role, m.content) for m in c.messages}), None)
        c = self.cands.get(p.candidate) if p.candidate is not None else None
        if c is None or c.proposal is not None:
            return
        p.accepted = True if p.accepted is None else p.accepted
        c.proposal = p
        c.parents = c.parents or p.parents
        c.origin = c.origin if c.origin != "unknown" else p.kind
        c.rollouts = c.rollouts if c.rollouts is not None else p.rollouts


def _identity(entry: Mapping[str, Any]) -> tuple[str, Any] | None:
    """What makes two candidate entries the same prompt: their replacements, else their sections."""
    replacements = replacements_of(entry)
    if replacements:
        return ("replacements", tuple(sorted((str(r.get("apply_to_role")), str(r.get("new_text")))
                                             for r in replacements)))
    sections = sections_of(entry)
    return ("messages", sections) if sections else None


def _parent(raw: Any, baseline: int | None) -> tuple[int, ...]:
    if isinstance(raw, str) and raw.strip().lower() in ("baseline", "seed", "root"):
        return (baseline,) if baseline is not None else ()
    value = integer(raw)
    return (value,) if value is not None else ()


def _notes(ex: Exploration, unparsed: int = 0) -> list[str]:
    notes = []
    if unparsed:
        notes.append(f"{unparsed} item(s) the backend sent could not be interpreted; they are kept as "
                     f"'{UNPARSED_EVENT_TYPE}' events (job.events), not used here")
    if not ex.finished:
        notes.append("the job has not finished: this is a snapshot of what it has streamed so far")
    if not ex.candidates:
        notes.append("no candidate has been reported yet")
    elif not any(c.seed_scores for c in ex.candidates):
        notes.append("the stream carries no per-seed scores, so the win matrix is empty")
    missing = [c.index for c in ex.candidates if c.messages is None]
    if missing and ex.candidates:
        notes.append(f"the stream carries no prompt text for candidate(s) {', '.join(map(str, missing[:10]))}")
    if ex.mipro is not None and ex.mipro.trials and not ex.mipro.grid():
        notes.append("the MIPRO trial events do not say which instruction and demo set each trial used")
    return notes


def explore(events: Iterable[Any], metrics: Iterable[Any] = (), *, job_id: str = "",
            status_doc: Mapping[str, Any] | None = None) -> Explorer:
    """The explorer of a job from its events (``Event`` models or dicts) and, optionally, metric points."""
    stream = SearchLog()
    for event in sorted(events, key=lambda e: field_of(e, "seq") or 0):
        etype = str(field_of(event, "type") or "")
        if etype in EXPLORER_EVENT_TYPES:
            stream.add(int(field_of(event, "seq") or 0), etype, dict(field_of(event, "data") or {}),
                       str(field_of(event, "message") or ""))
    for point in metrics:
        step, value = integer(field_of(point, "step")), number(field_of(point, "value"))
        if field_of(point, "name") == PROPOSAL_METRIC and step is not None and value is not None:
            stream.metric_scores[step] = (value, dict(field_of(point, "data") or {}))
    join = _Join(stream)
    join.candidates()
    join.prompts()
    join.choose_best()
    join.heldout()
    proposals = join.proposals()
    doc = dict(status_doc or {})
    algorithm = stream.algorithm or (str(doc["algorithm"]).lower() if doc.get("algorithm") else None)
    if stream.mipro is not None:
        _mipro_choice(stream, join)
    ex = Explorer(job_id=job_id, algorithm=algorithm, candidates=[join.cands[i] for i in sorted(join.cands)],
                  proposals=proposals, baseline=join.baseline, best=join.best, seeds=tuple(stream.seeds),
                  mipro=stream.mipro, finished=stream.done or str(doc.get("status", "")).lower() in (
                      "succeeded", "completed", "failed", "cancelled", "error"))
    ex.notes = _notes(ex, stream.unparsed)
    return ex


def _mipro_choice(stream: SearchLog, join: _Join) -> None:
    m = stream.mipro
    assert m is not None
    best = join.cands.get(join.best) if join.best is not None else None
    top = next((t for t in stream.topk if integer(t.get("rank")) == 1), None)
    if best is not None and best.instruction is not None:
        m.chosen = (best.instruction, best.demo_set)
    elif top is not None:
        indices = top.get("instruction_indices") or []
        m.chosen = (integer(indices[0]) if indices else None, None)
    if top is not None:
        m.chosen_test = number(top.get("test_score"))
