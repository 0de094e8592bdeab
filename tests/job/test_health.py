"""The run-health rules' edges, on a job's own history (no server): a rule without its data or with a sign too
weak says nothing, a backend's odd values never raise, the words name the steps, and a running panel reads
the warnings again only when new points came and its interval passed."""

from __future__ import annotations

from typing import Any

import pytest

from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.flows.health import steps_text
from synth_nb.job import Job
from synth_nb.job.health import LiveHealth, health_of
from synth_nb.records import Event, MetricPoint


def _job(flow: str, *, metrics: dict[str, dict[int, float]] | None = None,
         steps: list[dict[str, Any]] | None = None, status: str = "succeeded") -> Job:
    job = Job("job_health", flow, AsyncSynthClient("http://127.0.0.1:9", "k"), endpoints=get_flow(flow).endpoints)
    for name, points in (metrics or {}).items():
        for step, value in points.items():
            job.ingest_metric(MetricPoint(name=name, step=step, value=value))
    for seq, data in enumerate(steps or [], start=1):
        job.ingest_event(Event(seq=seq, type="rl.train.step", data=data))
    job.ingest_status({"status": status})
    return job


def _rising(n: int) -> dict[int, float]:
    return {s: 0.2 + 0.02 * s for s in range(1, n + 1)}


def test_an_rl_job_without_the_embedded_fields_and_a_single_eval_dip_is_silent() -> None:
    # the hosted shape: train and eval reward only; the eval reward dips once (two falls are needed)
    job = _job("rl", metrics={"train.reward_mean": _rising(30),
                              "eval.reward_mean": {0: 0.3, 10: 0.5, 20: 0.45, 30: 0.5}},
               steps=[{"step": s, "reward_mean": 0.2 + 0.02 * s} for s in range(1, 31)])
    assert health_of(job) == ()


def test_falling_evals_while_the_training_reward_falls_too_or_by_a_hair_are_not_the_sign() -> None:
    job = _job("rl", metrics={"train.reward_mean": {s: 0.8 - 0.02 * s for s in range(1, 31)},
                              "eval.reward_mean": {0: 0.6, 10: 0.5, 20: 0.4, 30: 0.3}})
    assert health_of(job) == ()
    hair = _job("rl", metrics={"train.reward_mean": _rising(30),
                               "eval.reward_mean": {0: 0.3, 10: 0.5, 20: 0.495, 30: 0.49}})
    assert health_of(hair) == ()  # 2 % in all: sampling noise


def test_odd_values_from_a_backend_are_skipped_not_raised() -> None:
    odd: list[dict[str, Any]] = [
        {"step": 1, "groups": "4", "zero_variance_groups": 9, "winning_completions": "abc", "group_seeds": None},
        {"step": 2, "groups": 4, "zero_variance_groups": 5, "winning_completions": [1, None, {}],
         "group_seeds": [1, 2, 3]},
        {"step": 3, "completion_tokens_mean": "long", "groups": -1, "zero_variance_groups": -1,
         "winning_completions": ["x" * 10_000] * 4, "group_seeds": [[1], [2], [3], [4]]},
    ]
    assert health_of(_job("rl", steps=odd)) == ()


def test_a_hostile_fingerprint_is_cut_to_twelve_characters() -> None:
    steps = [{"step": s, "reward_mean": 0.5, "group_seeds": [4 * s + g for g in range(4)],
              "winning_completions": ["\x1b[31mred" + "x" * 5_000] * 4} for s in range(1, 6)]
    (warning,) = health_of(_job("rl", steps=steps))
    assert warning.code == "rl.collapse" and "(fingerprint \x1b[31mredxxxx)" in warning.evidence
    assert len(warning.line()) < 400


def test_a_small_validation_rise_is_noise_and_a_short_run_is_not_judged_flat() -> None:
    train = {s: 2.0 - 0.01 * s for s in range(1, 101)}
    noisy = _job("sft", metrics={"train.loss": train, "val.loss": {20: 1.5, 40: 1.2, 60: 1.1, 80: 1.105, 100: 1.11}})
    assert health_of(noisy) == ()  # 0.9 % above its lowest: under the 2 % that counts as rising
    short = _job("sft", metrics={"train.loss": {s: 2.0 for s in range(1, 6)}})
    assert health_of(short) == ()  # five points: too few to say the loss does not fall


def test_a_prompt_search_without_held_out_scores_or_proposal_events_is_silent() -> None:
    job = _job("prompt_learning", metrics={"gepa.trial.score": {8: 0.6, 16: 0.7}, "gepa.best_score": {8: 0.6, 16: 0.7}})
    job.ingest_event(Event(seq=1, type="prompt.learning.completed", data={"finish_reason": "budget_exhausted"}))
    assert health_of(job) == ()


def test_the_steps_are_said_as_a_run_a_list_or_its_ends() -> None:
    assert steps_text([40]) == "step 40"
    assert steps_text([30, 10, 20]) == "steps 10, 20, 30"
    assert steps_text(range(1, 61)) == "steps 1–60"
    assert steps_text([1, 3, 5, 7, 9, 11, 13, 15]) == "steps 1, 3, 5, …, 11, 13, 15"


def test_a_running_panel_reads_the_warnings_again_only_after_new_points_and_its_interval() -> None:
    now = [0.0]
    job = _job("sft", metrics={"train.loss": {s: 2.0 for s in range(1, 10)}}, status="running")
    live = LiveHealth(job, every=5.0, clock=lambda: now[0])
    assert [w.code for w in live.current()] == ["sft.flat_loss"]
    for step in range(10, 40):  # the loss starts falling
        job.ingest_metric(MetricPoint(name="train.loss", step=step, value=2.0 - 0.05 * step))
    now[0] = 4.9
    assert [w.code for w in live.current()] == ["sft.flat_loss"]  # not yet: read at most every 5 s
    now[0] = 5.0
    assert live.current() == ()


@pytest.mark.parametrize("flow", ["rl", "sft", "prompt_learning"])
def test_a_job_with_nothing_streamed_has_no_warning(flow: str) -> None:
    assert health_of(_job(flow)) == ()
