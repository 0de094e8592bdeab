"""``POST /dry-rollout`` with ``"training": true``: what it refuses, and a run that cannot start says why.

The timed run itself (the job's model loaded in the training worker, real steps, no job created) is held by
``tests/pipeline/test_estimate_vs_real.py``, which checks each bundled SFT and RL config and then runs it.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from synth_nb.local.server import dry_training
from synth_nb.local.server.dry_context import DryContext

SFT_BODY = {"model": "Qwen/Qwen3-0.6B", "training_file_id": "dry-training_file",
            "hyperparameters": {"n_epochs": 1, "batch_size": 2}}
RL_BODY = {"model": "tiny", "data": {"config": {"training": {"max_steps": 10}}}}


def test_an_sft_dry_run_needs_the_training_flag(client: httpx.Client) -> None:
    refused = client.post("/dry-rollout", json={"kind": "sft", "body": SFT_BODY})
    assert refused.status_code == 422 and "a dry training run for sft and rl jobs" in refused.json()["detail"]


def test_files_must_be_text_by_file_id(client: httpx.Client) -> None:
    refused = client.post("/dry-rollout", json={"kind": "sft", "body": SFT_BODY, "training": True,
                                                "files": {"dry-training_file": 3}})
    assert refused.status_code == 422 and "files must map" in refused.json()["detail"]


def test_a_dataset_the_request_lacks_is_the_answer_and_no_job_is_left(client: httpx.Client) -> None:
    answer = client.post("/dry-rollout", json={"kind": "sft", "body": SFT_BODY, "training": True, "files": {}})
    assert answer.status_code == 200, answer.text
    training = answer.json()["training"]
    assert training == {"error": "training file dry-training_file is not on this backend; upload it again"}
    jobs = client.get("/learning/jobs").json()
    assert (jobs.get("jobs", jobs) if isinstance(jobs, dict) else jobs) == []


def _timed(events: list[tuple[float, str, dict[str, Any]]], losses: list[float]) -> Any:
    """A dry run's context as its events and step losses arrived (seconds since its start), nothing run."""
    ctx = DryContext.__new__(DryContext)
    ctx.events, ctx.metrics = events, [(t, "train.loss", step) for step, t in enumerate(losses, start=1)]
    return ctx


def test_a_steady_step_is_the_median_of_the_steps_after_the_first_and_the_start_up_says_its_cpu() -> None:
    # SFT: the steps' losses 0.1, 0.3 (a burst), 0.1 s apart after the first: 0.1 s a step, the burst left out
    started = (2.0, "sft.training.started", {"model": "tiny", "n_examples": 40, "start_cpu_seconds": 1.8})
    sft = dry_training._sft_figures(_timed([started], [2.5, 2.6, 2.9, 3.0]), SFT_BODY)
    assert sft["step_seconds"] == pytest.approx(0.1) and sft["steps"] == 4 and sft["job_steps"] == 20
    assert sft["load_seconds"] == 2.0 and sft["load_cpu_seconds"] == 1.8
    assert sft["step_what"] == "one optimiser step; the median of the 3 after the first"
    # RL: the worker's own count of each step, the first (warming up) left out: the median of 0.4, 0.2, 0.25
    steps = [(3.0 + i, "rl.train.step", {"seconds": s, "rollouts": 32}) for i, s in enumerate((0.8, 0.4, 0.2, 0.25))]
    rl = dry_training._rl_figures(_timed([(2.0, "rl.train.started", {"model": "tiny"}), *steps], []), RL_BODY)
    assert rl["step_seconds"] == pytest.approx(0.25) and "load_cpu_seconds" not in rl
    assert rl["step_what"] == "32 rollouts and one GRPO update; the median of the 3 steps after the first"
