"""Every hosted response shape synth-ai 0.2.24 accepts (docs/hosted-response-shapes.md), replayed by a real
HTTP server at the contract paths: what ``synth-nb attach`` prints, and what the attached job's summary and
explorer show."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from pathlib import Path

import pytest
from replay_server import KEY, Replay, shape_names

from synth_nb.cli import attach as attach_cli
from synth_nb.client import AsyncSynthClient
from synth_nb.errors import SynthNbError
from synth_nb.flows import flow_named_in, get_flow, guess_flow
from synth_nb.flows.chart import ChartData
from synth_nb.flows.prompt_learning.summary import job_summary
from synth_nb.job import Job
from synth_nb.job import attach as attach_job

pytestmark = pytest.mark.usefixtures("attach_env")


def run_attach(replay: Replay, capsys: pytest.CaptureFixture) -> tuple[int, str]:
    """``synth-nb attach JOB_ID --backend URL`` through the command's own parser and error mapping."""
    parser = argparse.ArgumentParser(prog="synth-nb attach")
    attach_cli.configure(parser)
    args = parser.parse_args([replay.job_id, "--backend", replay.url, "--env-file", ".env", "--poll-interval", "0.2",
                              "--stream-format", "cli"])  # a line per update, though not on a terminal
    try:
        code = attach_cli.run(args)
    except SynthNbError as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = exc.exit_code
    out = capsys.readouterr().out
    # a hosted shape carries too little for any run-health rule, and a rule without its data stays silent
    assert "\n  warning:" not in out
    return code, out


def attached(replay: Replay) -> Job:
    """The job as ``synth_nb.job.attach`` rebuilds it (then followed to its end), its client closed."""

    async def run() -> Job:
        client = AsyncSynthClient(replay.url, KEY)
        try:
            flows = {name: get_flow(name).endpoints for name in guess_flow(replay.job_id)}
            job = await attach_job(replay.job_id, client, flows, kind_of=flow_named_in, poll_interval=0.2)
            await job.wait(timeout=120)
            return job
        finally:
            await client.aclose()

    return asyncio.run(run())


def final_block(out: str) -> str:
    return out[out.index("Final status:"):]


def test_the_corpus_has_a_test_per_shape() -> None:
    modules = [sys.modules[__name__], importlib.import_module("test_later_dialect_shapes")]
    tested = {mark.args[1][0] for module in modules
              for fn in (getattr(module, n) for n in dir(module) if n.startswith("test_"))
              for mark in getattr(fn, "pytestmark", []) if mark.name == "parametrize" and mark.args[0] == "replay"}
    assert tested == set(shape_names())
    doc = (Path(__file__).parents[2] / "docs" / "hosted-response-shapes.md").read_text(encoding="utf-8")
    assert [name for name in shape_names() if f"`{name}`" not in doc] == []


@pytest.mark.parametrize("replay", ["pl_bare_list_without_seq"], indirect=True)
def test_events_without_seq_in_a_bare_list_are_numbered_and_shown_once(replay: Replay,
                                                                        capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0
    assert f"attached to prompt_learning job {replay.job_id} (ended: succeeded, 6 events)" in out
    assert "[1] prompt.learning.created: Prompt learning job created" in out
    assert "[6] prompt.learning.gepa.complete: GEPA optimisation complete" in out
    block = final_block(out)
    assert "events:   6   metrics: 0" in block and "baseline_score: 0.4\n  best_score: 0.57" in block
    job = attached(replay)
    assert [e.seq for e in job.events] == [1, 2, 3, 4, 5, 6]  # the list came again on every poll
    summary = job_summary(job).markdown
    assert "| Baseline | 0.4000 |" in summary and "| Best | 0.5700 |" in summary
    assert "## Best prompt" in summary and "exactly one intent name" in summary


@pytest.mark.parametrize("replay", ["pl_bare_list_without_seq_paged"], indirect=True)
def test_events_without_seq_from_a_backend_that_pages_by_position(replay: Replay) -> None:
    job = attached(replay)
    assert [(e.seq, e.type) for e in job.events][-2:] == [(5, "prompt.learning.best.prompt"),
                                                          (6, "prompt.learning.gepa.complete")]
    assert len(job.events) == 6 and any("since_seq=" not in p for p in replay.asked)


@pytest.mark.parametrize("replay", ["pl_score_and_baseline_in_message"], indirect=True)
def test_a_best_score_as_data_score_and_a_baseline_named_in_a_message(replay: Replay,
                                                                       capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0 and "baseline_score: 0.4\n  best_score: 0.57" in final_block(out)
    job = attached(replay)
    summary = job_summary(job).markdown
    assert "| Baseline | 0.4000 |" in summary and "| Best | 0.5700 |" in summary
    assert "| Improvement | +0.1700 absolute (+17.0 points), +42.5% relative |" in summary
    chart = ChartData(get_flow(job.flow).chart)
    chart.extend(job.metrics, job.events)
    assert chart.references == {"heldout_baseline": 0.4, "heldout_best": 0.57}


@pytest.mark.parametrize("replay", ["pl_final_results_candidates"], indirect=True)
def test_final_results_give_the_seed_and_the_optimized_candidate(replay: Replay,
                                                                 capsys: pytest.CaptureFixture) -> None:
    job = attached(replay)
    ex = job.explorer()
    assert [(c.index, c.origin, c.score) for c in ex.candidates] == [(0, "seed", 0.4), (1, "reflection", 0.57)]
    assert (ex.baseline, ex.best) == (0, 1)
    seed, best = ex.candidate(0), ex.candidate(1)
    assert best.messages is not None and best.messages[0].content.startswith("Read the customer's query")
    assert seed.messages is not None and seed.messages[0].content == "Classify the customer query into one banking intent."
    assert best.parents == (0,) and best.seed_scores == {"#0": 1.0, "#1": 1.0, "#2": 0.0, "#3": 1.0, "#4": 0.0}
    summary = job_summary(job).markdown
    assert "## Optimized candidates" in summary and "| 1 | 0.5700 | 21 | transformation | 5 |" in summary
    assert "## Top candidates" in summary and "| 1 | 0 | 0.4000 |" in summary
    code, out = run_attach(replay, capsys)
    assert code == 0 and "best_score: 0.57" in final_block(out)


@pytest.mark.parametrize("replay", ["rl_learning_paths_only"], indirect=True)
def test_an_rl_job_served_only_under_learning_jobs(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0, out
    assert f"attached to rl job {replay.job_id} (ended: succeeded, 4 events)" in out
    block = final_block(out)
    assert f"job:      {replay.job_id} (rl)" in block and "events:   4   metrics: 3" in block
    assert "train.loss=0.7400 (step 2)" in block and "eval.reward_mean=0.3500 (step 2)" in block
    job_id = replay.job_id
    assert f"/learning/jobs/{job_id}/metrics" in replay.asked and f"/rl/jobs/{job_id}/metrics" in replay.asked


@pytest.mark.parametrize("replay", ["pl_mipro_event_type_nested"], indirect=True)
def test_mipro_events_spelled_event_type_in_nested_containers(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0
    assert "[2] mipro.baseline.test: baseline test" in out
    assert "baseline_score: 0.5\n  best_score: 0.66" in final_block(out)
    job = attached(replay)
    assert [e.type for e in job.events] == ["mipro.job.started", "mipro.baseline.test", "mipro.trial.complete",
                                            "mipro.job.completed"]
    summary = job_summary(job).markdown
    assert "| Algorithm | MIPRO |" in summary and "| Baseline | 0.5000 |" in summary and "| Best | 0.6600 |" in summary
    assert job.explorer().mipro is not None and [t.score for t in job.explorer().mipro.trials] == [0.6]


@pytest.mark.parametrize("replay", ["pl_unreadable_items"], indirect=True)
def test_unreadable_items_are_kept_shown_and_noted(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0
    assert "[2] unparsed (warning): could not interpret: an event that is a JSON string, not an object" in out
    assert '    as sent: "rollout worker restarted"' in out and "    as sent: 42" in out
    assert "[4] unparsed (warning): could not interpret: an event with no type" in out
    block = final_block(out)
    assert "events:   6" in block and "best_score: 0.61" in block
    assert "note: 4 item(s) the backend sent could not be interpreted; they are kept as 'unparsed' events" in block
    job = attached(replay)
    kept = [e for e in job.events if e.type == "unparsed"]
    assert [e.seq for e in job.events] == [1, 2, 3, 4, 5, 6] and [e.seq for e in kept] == [2, 3, 4, 5]
    assert [e.data["raw"] for e in kept][:3] == ["rollout worker restarted", 42,
                                                 {"seq": 4, "message": "an object with no type", "data": {"x": 1}}]
    assert kept[3].data["raw"]["level"] == 3
    summary = job_summary(job).markdown
    assert "**Note:** 4 item(s) the backend sent could not be interpreted" in summary
    assert "4 item(s) the backend sent could not be interpreted; they are kept as 'unparsed' events (job.events), " \
           "not used here" in job.explorer().notes


@pytest.mark.parametrize("replay", ["sft_state_completed"], indirect=True)
def test_an_sft_job_whose_status_is_a_completed_state(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0
    assert f"attached to sft job {replay.job_id} (ended: succeeded, 3 events)" in out
    block = final_block(out)
    assert block.startswith("Final status: succeeded") and "events:   3   metrics: 2" in block
    assert f"fine_tuned_model: ft:Qwen/Qwen3-0.6B:{replay.job_id}" in block
    assert "[3] sft.job.completed: done" in out


@pytest.mark.parametrize("replay", ["pl_learning_paths_plain_id"], indirect=True)
def test_a_prompt_learning_job_found_on_sfts_path_is_named_by_its_status(replay: Replay,
                                                                          capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0, out
    assert f"attached to prompt_learning job {replay.job_id} (ended: succeeded, 2 events)" in out
    block = final_block(out)
    assert f"({'prompt_learning'}/gepa)" in block and "best_score: 0.57" in block and "metrics: 0" in block


@pytest.mark.parametrize("replay", ["pl_sse_frames_without_seq"], indirect=True)
def test_stream_frames_without_seq_then_the_same_events_polled(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0, out
    stream = f"/prompt-learning/online/jobs/{replay.job_id}/events/stream"
    assert stream in replay.asked
    assert [line.split("] ", 1)[1] for line in out.splitlines() if "] [" in line and "prompt.learning" in line] == [
        "[1] prompt.learning.gepa.start: Starting GEPA optimisation",
        "[2] prompt.learning.progress: 50% complete",
        "[3] prompt.learning.gepa.complete: GEPA optimisation complete"]
    block = final_block(out)
    assert "events:   3" in block and "best_score: 0.66" in block


@pytest.mark.parametrize("replay", ["sft_metrics_without_step"], indirect=True)
def test_metric_points_without_step_are_numbered_per_name(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0, out
    block = final_block(out)
    assert "events:   1   metrics: 4" in block
    assert "train.loss=0.7100 (step 3)" in block and "val.loss=0.8800 (step 1)" in block
    job = attached(replay)
    assert job.metric_series("train.loss") == [(1, 1.25), (2, 0.93), (3, 0.71)]


@pytest.mark.parametrize("replay", ["pl_metric_points_unreadable"], indirect=True)
def test_metric_points_that_cannot_be_read_are_counted_and_noted(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0, out
    block = final_block(out)
    assert "events:   2   metrics: 2" in block and "gepa.transformation.mean_score=0.5800 (step 2)" in block
    assert "note: 3 metric points could not be read (value not a number / no name / not an object); they are " \
           "kept as sent in job.unreadable_metrics" in block
    job = attached(replay)
    assert job.metric_series("gepa.transformation.mean_score") == [(1, 0.52), (2, 0.58)]  # "0.52" read as 0.52
    assert [(u["raw"], u["reason"]) for u in job.unreadable_metrics] == [
        ({"name": "gepa.status", "step": 2, "value": "running"}, "value not a number"),
        ({"step": 3, "value": 0.61}, "no name"), ("rollouts=40", "not an object")]  # once, though sent on every poll
    assert any("/metrics" in p for p in replay.asked[replay.asked.index(f"/prompt-learning/online/jobs/{job.id}") + 1:])
    summary = job_summary(job).markdown
    assert "**Note:** 3 metric points could not be read (value not a number / no name / not an object)" in summary
    assert "3 metric points could not be read (value not a number / no name / not an object); they are kept as " \
           "sent in job.unreadable_metrics" in job.explorer().notes


@pytest.mark.parametrize("replay", ["sft_timeline_phases"], indirect=True)
def test_timeline_entries_are_the_jobs_phases(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0, out
    shown = [line.split("] ", 1)[1] for line in out.splitlines() if "] timeline" in line]
    assert shown == ["timeline=queued", "timeline=training: 8 x H100",
                     'timeline entry without a phase: "checkpoint saved"', "timeline=succeeded"]
    assert "  phases:   queued -> training -> succeeded" in final_block(out)
    assert f"attached to sft job {replay.job_id} (running, 2 events so far)" in out  # the rest came while following
    assert replay.asked.count(f"/learning/jobs/{replay.job_id}/timeline") >= 2  # read again as the job went on
    job = attached(replay)
    assert [e.get("phase", e.get("raw")) for e in job.timeline] == ["queued", "training", "checkpoint saved",
                                                                   "succeeded"]


@pytest.mark.parametrize("replay", ["rl_timeline_under_learning"], indirect=True)
def test_an_rl_timeline_at_its_fallback_path(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 1, out
    assert "timeline=failed: task app unreachable" in out
    block = final_block(out)
    assert block.startswith("Final status: failed") and "  phases:   queued -> rollouts -> failed" in block
    job_id = replay.job_id
    assert f"/rl/jobs/{job_id}/timeline" in replay.asked and f"/learning/jobs/{job_id}/timeline" in replay.asked


@pytest.mark.parametrize("replay", ["rl_linked_training_job"], indirect=True)
def test_a_linked_training_job_is_followed_alongside(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    linked_id = "job_5d4c3b2a1f0e"
    code, out = run_attach(replay, capsys)
    assert code == 0, out
    assert f"linked job {linked_id} (sft, " in out and f"(synth-nb attach {linked_id} follows it alone)" in out
    assert f"] {linked_id} [3] sft.job.completed: Training complete" in out
    assert f"] [2] rl.train.started: Training started on {linked_id}" in out
    block = final_block(out)
    assert "events:   2   metrics: 0" in block  # the training job's events are its own, though their seqs collide
    assert f"linked job: {linked_id} (sft): succeeded, 3 events, 2 metrics (synth-nb attach {linked_id})" in block
    assert "linked last metrics: train.loss=0.7100 (step 2)" in block
    job = attached(replay)
    assert job.linked is not None and (job.linked.id, job.linked.flow) == (linked_id, "sft")
    assert [e.seq for e in job.linked.events] == [1, 2, 3] and job.linked.metric_series("train.loss") == [(1, 0.93),
                                                                                                         (2, 0.71)]


@pytest.mark.parametrize("replay", ["rl_linked_job_missing"], indirect=True)
def test_a_linked_job_the_backend_does_not_know_is_named(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0, out
    assert "linked job job_ffffeeeedddd could not be followed: job job_ffffeeeedddd was not found on" in out
    block = final_block(out)
    assert "events:   1" in block and "linked job: job_ffffeeeedddd could not be followed" in block
    assert replay.asked.count("/rl/jobs/job_ffffeeeedddd") == 1  # looked for once, not on every poll


@pytest.mark.parametrize("replay", ["pl_completed_finish_reason"], indirect=True)
def test_a_hosted_finish_reason_is_the_stop_reason_with_what_the_job_used(replay: Replay,
                                                                          capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0, out
    rows = dict(line.split(":", 1) for line in final_block(out).splitlines()[1:] if line.startswith("  ") and ":" in line)
    rows = {k.strip(): v.strip() for k, v in rows.items()}
    assert rows["stopped"] == "succeeded: the search used its rollout budget (budget_exhausted)"
    assert rows["estimate"] == "none kept (the job was not sent from here)"
    assert rows["rollouts"] == "180"  # the status document's metadata.stats
    assert rows["tokens"] == "1,235,000 (prompt 1,200,000, completion 35,000, unknown 0)"
    assert rows["time"] == "6 min 52 s" and rows["cost"] == "$0.4100"


@pytest.mark.parametrize("replay", ["pl_mipro_exhausted"], indirect=True)
def test_a_mipro_search_that_ran_out_without_a_reason_says_so(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0, out
    assert "  stopped:  succeeded: the search used its rollout budget (budget_exhausted)\n" in final_block(out)
    job = attached(replay)
    assert job.ending().stop.kind == "budget_exhausted"
