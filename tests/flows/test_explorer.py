"""The prompt-learning explorer: word diffs, candidates, lineage, Pareto front and per-seed wins from events.

Event streams come from three places: hand-written streams in the local executors' shapes (lineage with
a rejected proposal and a merge), the bundled recordings (only the shapes the hosted backend documents),
and real GEPA and MIPRO jobs on the embedded backend, whose explorer numbers are checked against the
events those jobs streamed.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest
from real_runs import real_runs

from synth_nb.client import AsyncSynthClient
from synth_nb.errors import ConfigError
from synth_nb.flows import get_flow, registered
from synth_nb.flows.prompt_learning.explorer import Explorer
from synth_nb.flows.prompt_learning.explorer_events import explore
from synth_nb.flows.prompt_learning.prompt_diff import Message, prompt_diff, word_diff
from synth_nb.flows.prompt_learning.summary import job_summary
from synth_nb.job import Job
from synth_nb.local.executors.replay import BUNDLED_DIR
from synth_nb.records import Event


def test_a_word_diff_gives_back_both_texts_and_marks_each_change() -> None:
    old = "You are an expert banking assistant. Classify the query."
    new = "You are a careful banking assistant. Classify the query into one intent."
    pieces = word_diff(old, new)
    assert "".join(p.text for p in pieces if p.op != "added") == old
    assert "".join(p.text for p in pieces if p.op != "removed") == new
    [diff] = prompt_diff([Message("system", old)], [Message("system", new)])
    assert diff.wdiff() == ("You are [-an expert-]{+a careful+} banking assistant. Classify the "
                            "query{+ into one intent+}.")
    assert (diff.words("added"), diff.words("removed")) == (5, 2)


def test_messages_are_paired_by_role_and_added_or_removed_ones_say_so() -> None:
    old = [Message("system", "Be brief."), Message("user", "Q: {query}")]
    new = [Message("system", "Be brief and exact."), Message("user", "Q: {query}"), Message("assistant", "Sure.")]
    diffs = prompt_diff(old, new)
    assert [(d.role, d.changed, d.old is None) for d in diffs] == [
        ("system", True, False), ("user", False, False), ("assistant", True, True)]
    assert prompt_diff(new, old)[-1].new is None


def _stream(*items: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"seq": i, "type": t, "message": "", "data": d} for i, (t, d) in enumerate(items, start=1)]


def _cand(index: int, score: float, scores: list[float], parents: list[int], system: str, **extra: Any) -> tuple:
    return ("prompt.learning.candidate.evaluated", {
        "candidate_index": index, "score": score, "parents": parents, "generation": len(parents) and 1,
        "seeds": [10, 11, 12], "instance_scores": scores, "is_baseline": index == 0, "rollouts": 10 * (index + 1),
        "origin": "seed" if index == 0 else ("merge" if len(parents) > 1 else "reflection"),
        "template": {"sections": [{"role": "system", "content": system}, {"role": "user", "content": "Q: {query}"}]},
        **extra})


LOCAL_STREAM = _stream(
    ("prompt.learning.gepa.start", {}),
    ("prompt.learning.rollouts.start", {"validation_seeds": [10, 11, 12]}),
    _cand(0, 1 / 3, [1.0, 0.0, 0.0], [], "Classify."),
    ("gepa.transformation.proposed", {"transformation_id": "t_0001", "parent_id": 0, "operator": "reflective_rewrite",
                                      "transformation_dict": {"text_replacements": [
                                          {"apply_to_role": "system", "old_text": "Classify.",
                                           "new_text": "Classify the banking intent."}]}}),
    _cand(1, 2 / 3, [1.0, 1.0, 0.0], [0], "Classify the banking intent."),
    ("prompt.learning.proposal.scored", {"proposal": 1, "score": 0.75, "accepted": True, "candidate_index": 1}),
    ("gepa.transformation.proposed", {"transformation_id": "t_0002", "parent_id": 1, "operator": "reflective_rewrite"}),
    ("prompt.learning.proposal.scored", {"proposal": 2, "score": 0.25, "accepted": False}),
    ("prompt.learning.gepa.merge", {"accepted": True, "parent_ids": [0, 1], "candidate_index": 2}),
    _cand(2, 2 / 3, [1.0, 0.0, 1.0], [0, 1], "Classify the banking intent, one label only and nothing else."),
    ("prompt.learning.best.prompt", {"candidate_index": 1, "best_score": 0.7, "best_prompt": {"sections": [
        {"role": "system", "content": "Classify the banking intent."}, {"role": "user", "content": "Q: {query}"}]}}),
    ("prompt.learning.validation.scored", {"is_baseline": True, "accuracy": 0.4}),
    ("prompt.learning.validation.scored", {"rank": 0, "accuracy": 0.7, "candidate_index": 1}),
    ("prompt.learning.gepa.complete", {"best_score": 0.7}),
)


def test_a_local_stream_gives_lineage_with_rejected_proposals_and_merges() -> None:
    ex = explore(LOCAL_STREAM, job_id="pl_local")
    assert isinstance(ex, Explorer) and ex.finished and ex.notes == []
    assert (ex.baseline, ex.best) == (0, 1)
    [root] = ex.lineage()
    assert root.candidate.index == 0 and [n.candidate.index for n in root.children] == [1, 2]
    [one, merged] = root.children
    assert [p.number for p in one.rejected] == [2] and one.rejected[0].minibatch_score == 0.25
    assert merged.candidate.parents == (0, 1) and merged.candidate.origin == "merge"
    assert ex.candidate(1).proposal is not None and ex.candidate(1).proposal.minibatch_score == 0.75
    assert (ex.candidate(0).heldout, ex.candidate(1).heldout) == (0.4, 0.7)
    wins = ex.wins()
    assert wins.seeds == (10, 11, 12)
    assert wins.owners == {11: frozenset({1}), 12: frozenset({2})}  # seed 10: everyone scores 1.0, owned by none
    assert ex.frontier("length") == [0, 1] and ex.frontier("rollouts") == [0, 1]
    rows = {r["candidate"]: r for r in ex.rows()}
    assert rows[1]["seeds_owned"] == 1 and rows[1]["accepted"] is True and rows[2]["parents"] == [0, 1]
    [system, user] = ex.baseline_to_best() or []
    assert system.wdiff() == "Classify{+ the banking intent+}." and not user.changed


def test_a_running_job_shows_what_it_has_streamed_so_far() -> None:
    ex = explore(LOCAL_STREAM[:6], job_id="pl_live")
    assert not ex.finished and ex.notes[0].startswith("the job has not finished")
    assert [c.index for c in ex.candidates] == [0, 1] and ex.best == 1  # the best scored so far
    assert ex.candidate(1).messages is not None and ex.candidate(1).proposal is not None


def _recording(name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    events, metrics = [], []
    for line in (BUNDLED_DIR / f"{name}.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["kind"] == "event":
            events.append({**row["payload"], "seq": len(events) + 1})
        elif row["kind"] == "metric":
            metrics.append(row["payload"])
    return events, metrics


def test_the_hosted_gepa_shapes_give_baseline_best_proposals_and_their_diff() -> None:
    events, metrics = _recording("gepa")
    ex = explore(events, metrics, job_id="pl_hosted")
    proposed = [e["data"] for e in events if e["type"] == "gepa.transformation.proposed"]
    assert [c.index for c in ex.candidates] == [0, 1] and (ex.baseline, ex.best) == (0, 1)
    assert (ex.candidate(0).heldout, ex.candidate(1).heldout) == (0.53, 0.92)  # validation.scored
    assert ex.candidate(1).score == 0.95  # optimized_candidates[rank 1].score.accuracy
    assert len(ex.proposals) == len(proposed) == 20
    scores = {m["step"]: m["value"] for m in metrics if m["name"] == "gepa.transformation.mean_score"}
    assert [p.minibatch_score for p in ex.proposals] == [scores[n] for n in range(1, 21)]
    assert ex.proposals[0].candidate == 1 and ex.candidate(1).parents == (0,)
    assert ex.proposals[5].parent_label == "best"  # a parent named as "best" is kept as the backend said it
    [system, user] = ex.baseline_to_best() or []
    assert system.old == proposed[0]["transformation_dict"]["text_replacements"][0]["old_text"]
    assert system.new == ex.candidate(1).messages[0].content and not user.changed
    assert any("no per-seed scores" in n for n in ex.notes)


def test_the_hosted_mipro_shapes_give_trials_and_the_chosen_prompt() -> None:
    events, metrics = _recording("mipro")
    ex = explore(events, metrics, job_id="pl_hosted_mipro")
    assert ex.algorithm == "mipro" and ex.mipro is not None
    trials = [e["data"]["minibatch_score"] for e in events if e["type"] == "mipro.trial.complete"]
    assert [t.score for t in ex.mipro.trials] == trials
    assert ex.mipro.chosen_test == 0.674 and ex.candidate(ex.baseline).heldout == 0.55
    assert sorted(ex.mipro.instructions) == [0, 1, 2, 3]
    assert any("instruction and demo set" in n for n in ex.notes)
    assert "## MIPRO search" in ex.to_markdown() and "synth-explorer" in ex.to_html()


# -- real jobs on the embedded backend ---------------------------------------------------------------------


def _of(job: Any, etype: str) -> list[dict[str, Any]]:
    return [e.data for e in job.events if e.type == etype]


@pytest.mark.parametrize("name", ["gepa_a", "gepa_b"])
def test_gepa_explorer_numbers_are_the_streamed_ones(name: str) -> None:
    job = real_runs().jobs[name]
    ex = job.explorer()
    evaluated = _of(job, "prompt.learning.candidate.evaluated")
    assert [c.index for c in ex.candidates] == [d["candidate_index"] for d in evaluated]
    for data in evaluated:
        c = ex.candidate(data["candidate_index"])
        assert c is not None and c.score == data["score"] and list(c.parents) == data["parents"]
        assert c.seed_scores == dict(zip(data["seeds"], data["instance_scores"], strict=True))
        assert [m.content for m in c.messages or ()] == [s["content"] for s in data["template"]["sections"]]
    best = _of(job, "prompt.learning.best.prompt")[-1]
    assert ex.best == best["candidate_index"]
    assert [m.content for m in ex.candidate(ex.best).messages] == [s["content"] for s in best["best_prompt"]["sections"]]
    for entry in _of(job, "prompt.learning.final.results")[-1]["attempted_candidates"]:
        assert ex.candidate(entry["candidate_index"]).heldout == entry.get("heldout_accuracy")
    for scored in _of(job, "prompt.learning.proposal.scored"):
        proposal = next(p for p in ex.proposals if p.number == scored["proposal"])
        assert (proposal.minibatch_score, proposal.accepted) == (scored["score"], scored["accepted"])
        if scored["accepted"]:
            assert proposal.candidate == scored["candidate_index"]
    _check_front_and_wins(ex, evaluated)
    frame = job.candidates_df()
    assert len(frame) == len(evaluated) and frame["score"].tolist() == [d["score"] for d in evaluated]
    assert frame.loc[frame["best"], "candidate"].tolist() == [ex.best]


def _check_front_and_wins(ex: Explorer, evaluated: list[dict[str, Any]]) -> None:
    """The frontier and the owners, worked out again straight from the events."""
    points = ex.points("length")
    front = set(ex.frontier("length"))
    for c, x, y in points:
        dominated = any(x2 <= x and y2 >= y and (x2 < x or y2 > y) for _, x2, y2 in points)
        first_of_ties = all(o.index >= c.index for o, x2, y2 in points if (x2, y2) == (x, y))
        assert (c.index in front) == (not dominated and first_of_ties)
    seeds = sorted({s for d in evaluated for s in d["seeds"]})
    for seed in seeds:
        scores = {d["candidate_index"]: dict(zip(d["seeds"], d["instance_scores"], strict=True))[seed]
                  for d in evaluated}
        owners = {i for i, v in scores.items() if v == max(scores.values())} if max(scores.values()) > min(
            scores.values()) else set()
        assert set(ex.wins().owners.get(seed, ())) == owners


def test_a_real_gepa_stream_says_why_each_proposal_was_kept_and_what_the_proposer_saw() -> None:
    job = real_runs().jobs["gepa_a"]
    ex = job.explorer()
    scored = _of(job, "prompt.learning.proposal.scored")
    proposed = _of(job, "gepa.transformation.proposed")
    assert proposed and all(d["proposer_input"].startswith("offline rewrite grounded on (query -> expected):")
                            and d["proposer_output"] and d["proposer_output_chars"] >= len(d["proposer_output"])
                            for d in proposed)
    for d in scored:
        p = next(p for p in ex.proposals if p.number == d["proposal"])
        assert p.parent_score == d["parent_score"] is not None and p.reason == d["reason"]
        assert (d["score"] > d["parent_score"]) == d["accepted"]  # GEPA keeps a proposal that beats its parent
        if d["accepted"]:
            assert d["reason"] == (f"minibatch score {d['score']:.3f} beat its parent's {d['parent_score']:.3f} on the "
                                   f"same minibatch: kept as candidate {d['candidate_index']}")
    assert [p.proposer_input for p in ex.proposals] == [d["proposer_input"] for d in proposed]


REJECTING_STREAM = _stream(*[
    (etype, {**data, **({"proposer_input": "reflect on: Q1 -> a", "proposer_output": "```Classify, tersely.```"}
                        if etype == "gepa.transformation.proposed" else {}),
             **({"parent_score": 0.5, "reason": "minibatch score 0.250 did not beat its parent's 0.500 on the same "
                 "minibatch"} if etype == "prompt.learning.proposal.scored" and not data["accepted"] else {})})
    for etype, data in ((e["type"], e["data"]) for e in LOCAL_STREAM)])


def test_rejected_proposals_are_a_layer_of_the_explorer_and_rows_of_the_table() -> None:
    ex = explore(REJECTING_STREAM, job_id="pl_rejecting")
    [rejected] = ex.rejected()
    assert (rejected.number, rejected.parents, rejected.minibatch_score, rejected.parent_score) == (2, (1,), 0.25, 0.5)
    assert rejected.proposer_output == "```Classify, tersely.```" and "did not beat" in (rejected.reason or "")
    frame = ex.frame(include_rejected=True)
    assert len(frame) == len(ex.candidates) + 1 and len(ex.frame()) == len(ex.candidates)
    row = frame.iloc[-1]
    assert pd.isna(row["candidate"]) and row["accepted"] is False and row["proposal"] == 2
    assert row["parent_minibatch_score"] == 0.5 and row["rejected_because"] == rejected.reason
    assert row["proposer_input"] == "reflect on: Q1 -> a"
    html = ex.to_html()
    assert "Rejected proposals (1 of 3)" in html and "did not beat its parent&#x27;s 0.500" in html
    assert "proposer output (raw)" in html and "```Classify, tersely.```" in html
    assert "rejected (minibatch 0.250 vs parent 0.500)" in html  # the lineage's rejected layer


def test_two_gepa_runs_differ_as_their_seeds_and_budgets_say() -> None:
    runs = real_runs()
    a, b = runs.jobs["gepa_a"], runs.jobs["gepa_b"]
    for job, budget in ((a, 200), (b, 150)):
        assert _of(job, "prompt.learning.completed")[-1]["rollouts_completed"] <= budget
    assert _of(a, "prompt.learning.gepa.start")[0]["rng_seed"] == 0
    assert _of(b, "prompt.learning.gepa.start")[0]["rng_seed"] == 1
    assert len(a.explorer().candidates) != len(b.explorer().candidates) or a.explorer().rows() != b.explorer().rows()


def test_the_explorer_is_live_on_a_prefix_of_a_real_stream() -> None:
    job = real_runs().jobs["gepa_a"]
    events = list(job.events)
    cut = next(i for i, e in enumerate(events) if e.type == "prompt.learning.candidate.evaluated"
               and e.data["candidate_index"] == 1)
    ex = explore(events[: cut + 1], job_id=job.id)
    assert not ex.finished and [c.index for c in ex.candidates] == [0, 1]
    assert all(c.messages for c in ex.candidates) and all(c.seed_scores for c in ex.candidates)


def test_mipro_explorer_grid_is_the_trials_grid() -> None:
    job = real_runs().jobs["mipro"]
    ex = job.explorer()
    assert ex.mipro is not None
    trials = _of(job, "mipro.trial.complete")
    expected: dict[tuple[int, int], list[float]] = {}
    for t in trials:
        expected.setdefault((t["instruction_index"], t["demo_index"]), []).append(t["minibatch_score"])
    assert ex.mipro.grid() == {k: (sum(v) / len(v), len(v)) for k, v in expected.items()}
    fulls = _of(job, "mipro.fulleval.complete")
    assert ex.mipro.full_evals == {(f["instruction_index"], f["demo_index"]): f["score"] for f in fulls}
    best = ex.candidate(ex.best)
    assert best is not None and ex.mipro.chosen == (best.instruction, best.demo_set)
    assert ex.best == _of(job, "prompt.learning.best.prompt")[-1]["candidate_index"]
    assert all(c.parents == (ex.baseline,) for c in ex.candidates if c.index != ex.baseline)


def test_a_real_mipro_stream_says_why_each_instruction_was_kept_or_not_and_what_the_proposer_saw() -> None:
    job = real_runs().jobs["mipro"]
    ex = job.explorer()
    proposed = _of(job, "mipro.instruction.proposed")
    scored = {d["proposal"]: d for d in _of(job, "prompt.learning.proposal.scored")}
    assert proposed and all(d["proposer_input"].startswith("offline rewrite grounded on (query -> expected):")
                            and d["proposer_output"] and d["proposer_output_chars"] >= len(d["proposer_output"])
                            for d in proposed)
    assert sorted(scored) == [d["instruction_id"] for d in proposed]  # a verdict for every proposed instruction
    means: dict[tuple[int, int], list[float]] = {}
    for t in _of(job, "mipro.trial.complete"):
        means.setdefault((t["instruction_index"], t["demo_index"]), []).append(t["minibatch_score"])
    best_of = {i: max((sum(v) / len(v) for (j, _), v in means.items() if j == i), default=None)
               for i in range(len(proposed) + 1)}
    fulls = {f["candidate_index"]: f for f in _of(job, "mipro.fulleval.complete")}
    for number, d in scored.items():
        p = next(p for p in ex.proposals if p.number == number)
        assert (p.minibatch_score, p.parent_score, p.reason, p.accepted) == (d["score"], d["parent_score"], d["reason"],
                                                                              d["accepted"])
        assert p.parents == (ex.baseline,) and d["parent_score"] == best_of[0]
        assert p.proposed_text() == proposed[number - 1]["instruction_text"]
        assert p.proposer_input == proposed[number - 1]["proposer_input"]
        if d["accepted"]:  # kept: one of its (instruction, demo set) pairs was fully evaluated into a candidate
            assert fulls[d["candidate_index"]]["instruction_index"] == number and p.candidate == d["candidate_index"]
        else:
            assert d["candidate_index"] is None and d["score"] == best_of[number]
            assert all(f["instruction_index"] != number for f in fulls.values())
    rejected = ex.rejected()
    assert rejected, "the bundled tiny MIPRO config leaves an instruction out"
    assert all("never led the untested pairs" in (p.reason or "") or "no trial used it" in (p.reason or "")
               for p in rejected)
    frame = job.candidates_df(include_rejected=True)
    rows = frame[frame["candidate"].isna()]
    assert rows["proposal"].tolist() == [p.number for p in rejected]
    assert rows["rejected_because"].tolist() == [p.reason for p in rejected]
    assert rows["proposer_output"].tolist() == [p.proposer_output for p in rejected]
    html = ex.to_html()
    assert f"Rejected proposals ({len(rejected)} of {len(proposed)})" in html and "proposer input" in html


def test_the_summary_carries_the_baseline_to_best_diff() -> None:
    job = real_runs().jobs["gepa_a"]
    markdown = job_summary(job).markdown
    diff = job.explorer().baseline_to_best() or []
    assert "## Baseline → best prompt" in markdown
    for d in diff:
        if d.changed:
            assert d.wdiff() in markdown


def test_a_job_that_streams_no_samples_has_empty_sample_views_and_prompt_learning_none() -> None:
    rl, sft = real_runs().jobs["rl"], real_runs().jobs["sft"]  # replayed recordings without sample events
    table = rl.rollouts()
    assert table.summary_line() == f"RL rollouts of job {rl.id}: 0 sampled" and len(table) == 0
    assert "No rollouts in the job's events" in table.to_html() and table.highlights == []
    assert "no rollouts in the job's events" in table.to_text()
    assert rl.rollouts_df().empty and {"step", "reward", "prompt", "completion"} <= set(rl.rollouts_df())
    assert len(sft.samples()) == 0 and sft.samples_df().empty
    with pytest.raises(ConfigError, match=r"\(prompt learning\) streams no samples \(RL jobs: job\.rollouts\(\); "
                                          r"SFT jobs: job\.samples\(\)\)"):
        real_runs().jobs["gepa_a"].rollouts()


def test_only_prompt_learning_jobs_have_an_explorer() -> None:
    with pytest.raises(ConfigError, match="SFT job, which has no explorer"):
        real_runs().jobs["sft"].explorer()


class _Tally:
    """A flow's own explorer: the points its events announced."""

    def __init__(self, job: Any) -> None:
        self.points = [e.data["value"] for e in job.events.of_types({"tally.point"})]

    def summary_line(self) -> str:
        return f"{len(self.points)} points"

    def to_html(self) -> str:
        return f"<p>{self.summary_line()}</p>"

    def to_markdown(self) -> str:
        return self.summary_line()

    def frame(self) -> Any:
        return list(self.points)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self.summary_line()}


def test_job_explorer_is_whatever_the_jobs_flow_answers() -> None:
    class TallyFlow(type(get_flow("rl"))):  # type: ignore[misc]
        name = "tally"
        label = "tally"
        explorer_event_types = frozenset({"tally.point"})

        def explorer(self, job: Any) -> _Tally:
            return _Tally(job)

    flow = TallyFlow()
    with registered(flow):
        job = Job("job_1", "tally", AsyncSynthClient("http://127.0.0.1:9", "k"), endpoints=flow.endpoints)
        for seq, etype in enumerate(["tally.point", "rl.progress", "tally.point"], start=1):
            job.ingest_event(Event(seq=seq, type=etype, data={"value": seq}))
        assert job.explorer().summary_line() == "2 points"
        assert job.candidates_df() == [1, 3]


def test_explorer_outputs_escape_prompt_text() -> None:
    stream = [dict(e) for e in LOCAL_STREAM]
    stream[2] = {**stream[2], "data": {**stream[2]["data"], "template": {"sections": [
        {"role": "system", "content": "<script>alert(1)</script> key sk_env_0123456789abcdef0123"}]}}}
    html = explore([Event(**e) for e in stream], job_id="pl_x").to_html()
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "0123456789abcdef0123" not in html and "0123" in html


def test_every_score_says_what_it_was_measured_on_and_how_best_is_chosen() -> None:
    stream = [*LOCAL_STREAM[:-1], {"seq": 99, "type": "prompt.learning.validation.scored", "message": "",
                                   "data": {"rank": 1, "accuracy": 0.9, "candidate_index": 2}}, LOCAL_STREAM[-1]]
    ex = explore([Event(**e) for e in stream], job_id="pl_x")
    assert ex.best == 1 and ex.candidate(2).heldout == 0.9  # the job's pick is not the held-out leader
    note = ex.best_note()
    assert "highest search score, measured on the validation seeds" in note
    assert "By held-out score #2 ranks first (0.900; #1: 0.700)." in note
    assert "search score: baseline 0.333 → best #1 0.667" in ex.summary_line()
    page, markdown = ex.to_html(), ex.to_markdown()
    for text in (page, markdown):
        assert note in text or note.replace("'", "&#x27;") in text
        assert "Search score (validation seeds)" in text and "Held-out score (unseen seeds)" in text
        assert "(best by search score)" in text
    assert "search score (validation)</text>" in page and "search score 0.667" in page  # axis and point titles
    agreeing = explore([Event(**e) for e in LOCAL_STREAM], job_id="pl_y").best_note()
    assert "ranks first" not in agreeing  # said only where the two rankings disagree
