"""A backend speaking the later releases' dialect (the names synth-ai 0.4.12 and 0.5.0 read: ``reward`` scores,
``instance_rewards``, ``gepa.transformation.mean_reward``, ``learning.policy.*.job.*`` endings), replayed by a
real HTTP server: ``synth-nb attach`` and the attached job show the same progress, chart, best score and
summary as for the same job in 0.2.24's names."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest
from replay_server import Replay, load_shape, serve_shape
from test_replay_shapes import attached, final_block, run_attach

from synth_nb.flows import get_flow
from synth_nb.flows.chart import ChartData
from synth_nb.flows.prompt_learning.summary import job_summary
from synth_nb.job import Job
from synth_nb.job.progress import progress_of

pytestmark = pytest.mark.usefixtures("attach_env")

#: the later names and the 0.2.24 names of the same things, as they appear in a shape's JSON
_TO_0224 = [('"instance_rewards"', '"instance_scores"'), ('"reward"', '"accuracy"'),
            ("gepa.transformation.mean_reward", "gepa.transformation.mean_score")]


def in_0224_names(shape: dict[str, Any]) -> dict[str, Any]:
    """The same job as 0.2.24's backend would have sent it (its ending is ``prompt.learning.gepa.complete``)."""
    text = json.dumps(shape)
    for later, old in _TO_0224:
        text = text.replace(later, old)
    old_shape = json.loads(text)
    events = old_shape["routes"]["/prompt-learning/online/jobs/{job_id}/events"]
    old_shape["routes"]["/prompt-learning/online/jobs/{job_id}/events"] = [
        e for e in events if not e["type"].startswith("learning.policy.")]
    return old_shape


def _chart(job: Job) -> tuple[dict[str, Any], dict[str, float]]:
    chart = ChartData(get_flow(job.flow).chart)
    chart.extend(job.metrics, job.events)
    return {key: [a.tolist() for a in buffer.xy()] for key, buffer in chart.series.items()}, chart.references


def _without_counts(block: str, url: str) -> str:
    return re.sub(r"  events: +\d+", "  events: N", block.replace(url, "URL"))


@pytest.mark.parametrize("replay", ["pl_later_dialect_rewards"], indirect=True)
def test_a_later_dialect_gepa_job_shows_what_the_same_job_in_0224_names_shows(
        replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0, out
    assert "[12] learning.policy.gepa.job.completed: prompt_learning job succeeded" in out
    block = final_block(out)
    assert "baseline_score: 0.4\n  best_score: 0.6" in block
    assert "gepa.transformation.mean_score=0.6250 (step 2)" in block and "mean_reward" not in block
    assert "metrics: 6" in block
    later = attached(replay)
    with serve_shape(in_0224_names(load_shape("pl_later_dialect_rewards"))) as old_replay:
        code_0224, out_0224 = run_attach(old_replay, capsys)
        old = attached(old_replay)
    assert code_0224 == 0
    assert _without_counts(block, replay.url) == _without_counts(final_block(out_0224), old_replay.url)
    assert job_summary(later).markdown == job_summary(old).markdown
    summary = job_summary(later).markdown
    assert "| Baseline | 0.4000 |" in summary and "| Best | 0.6000 |" in summary
    assert "| 1 | 0.5500 | 140 | transformation | 5 |" in summary  # the optimized candidate's reward and N
    assert "| 1 | 1 | 0.5500 |" in summary  # the top attempted candidate, ranked by its reward
    assert _chart(later) == _chart(old)
    series, references = _chart(later)
    assert references == {"heldout_baseline": 0.4, "heldout_best": 0.6}
    assert series["trial"][1] == [0.45, 0.55]
    assert later.metric_series("gepa.transformation.mean_score") == [(1, 0.5), (2, 0.625)]
    ex_later, ex_old = later.explorer(), old.explorer()
    assert [(c.index, c.score, c.heldout, c.seed_scores) for c in ex_later.candidates] == \
        [(c.index, c.score, c.heldout, c.seed_scores) for c in ex_old.candidates]
    assert (ex_later.baseline, ex_later.best) == (0, 1) and ex_later.candidate(1).heldout == 0.6
    assert ex_later.candidate(1).seed_scores == {80: 1.0, 81: 1.0, 82: 1.0, 83: 0.0, 84: 0.0}
    progress = [progress_of(j.status_doc, list(j.events), None, status=j.status) for j in (later, old)]
    assert progress[0] == progress[1] and (progress[0].done, progress[0].total) == (40, 40)


@pytest.mark.parametrize("replay", ["pl_later_dialect_failed"], indirect=True)
def test_a_later_dialect_failure_is_a_failure_with_its_reason(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 1, out
    assert "[3] prompt.learning.gepa.failed (error): prompt_learning job failed" in out
    block = final_block(out)
    assert block.startswith("Final status: failed")
    assert "error: task app rejected the API key (HTTP 401)" in block
    assert "  stopped:  failed: task app rejected the API key (HTTP 401)\n" in block  # the one stop reason
    job = attached(replay)
    assert job.status == "failed" and [e.type for e in job.events][-2:] == [
        "prompt.learning.gepa.failed", "learning.policy.gepa.job.failed"]


@pytest.mark.parametrize("replay", ["rl_later_dialect_ending"], indirect=True)
def test_a_later_dialect_rl_job_names_its_model(replay: Replay, capsys: pytest.CaptureFixture) -> None:
    code, out = run_attach(replay, capsys)
    assert code == 0, out
    assert "[6] learning.policy.rl.job.completed: rl job succeeded" in out
    block = final_block(out)
    assert "fine_tuned_model: rl:tiny:job_3c2b1a0f9e8d" in block
    assert "train.reward_mean=0.5000 (step 2)" in block and "events:   6   metrics: 3" in block
    job = attached(replay)
    assert np.allclose([v for _, v in job.metric_series("train.reward_mean")], [0.25, 0.5])
