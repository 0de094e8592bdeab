"""``POST /dry-rollout`` with ``"training": true``: what it refuses, and a run that cannot start says why.

The timed run itself (the job's model loaded in the training worker, real steps, no job created) is held by
``tests/pipeline/test_estimate_vs_real.py``, which checks each bundled SFT and RL config and then runs it.
"""

from __future__ import annotations

import httpx

SFT_BODY = {"model": "Qwen/Qwen3-0.6B", "training_file_id": "dry-training_file",
            "hyperparameters": {"n_epochs": 1, "batch_size": 2}}


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
