"""Job routes for the three flows, checked against the shapes synth-ai 0.2.24 parses."""

from __future__ import annotations

import httpx
from local_backend_helpers import ENV_KEY, replay_body, wait_terminal

TERMINAL_PHASES = {"succeeded", "failed", "cancelled"}


def _upload(client: httpx.Client) -> str:
    files = {"file": ("train.jsonl", b'{"messages": [{"role": "user", "content": "hi"}]}\n', "application/jsonl")}
    return client.post("/files", files=files, data={"purpose": "fine-tune"}).json()["id"]


def test_sft_create_start_and_stream_to_success(client: httpx.Client) -> None:
    file_id = _upload(client)
    body = replay_body("sft", model="Qwen/Qwen3-0.6B", training_type="sft_offline", training_file_id=file_id,
                       hyperparameters={"n_epochs": 1})
    created = client.post("/learning/jobs", json=body)
    assert created.status_code == 201
    assert created.headers["content-type"].startswith("application/json")
    job = created.json()
    assert job["job_id"].startswith("job_") and job["status"] == "queued" and job["updated_at"]
    started = client.post(f"/learning/jobs/{job['job_id']}/start", json={})
    assert started.status_code == 200 and started.json()["status"] == "running"
    again = client.post(f"/learning/jobs/{job['job_id']}/start", json={})
    assert again.status_code == 200  # idempotent

    done = wait_terminal(client, f"/learning/jobs/{job['job_id']}")
    assert done["status"] == "succeeded"
    assert done["fine_tuned_model"].startswith("peft:")
    assert done["updated_at"] != job["updated_at"] and done["finished_at"]

    events = client.get(f"/learning/jobs/{job['job_id']}/events", params={"since_seq": 0, "limit": 1000}).json()
    seqs = [e["seq"] for e in events["events"]]
    assert seqs == list(range(1, len(seqs) + 1))
    assert events["events"][0]["type"] == "sft.created"
    assert all(e["message"] and e["created_at"] and isinstance(e["data"], dict) for e in events["events"])
    assert "sft.job.completed" in {e["type"] for e in events["events"]}
    assert events["has_more"] is False and events["next_seq"] == seqs[-1]

    timeline = client.get(f"/learning/jobs/{job['job_id']}/timeline").json()
    phases = [entry["phase"] for entry in timeline["events"]]
    assert phases == ["queued", "running", "succeeded"] and timeline["timeline"] == timeline["events"]


def test_events_honour_since_seq_and_limit(client: httpx.Client) -> None:
    job = client.post("/learning/jobs", json=replay_body("sft", auto_start=True)).json()["job_id"]
    wait_terminal(client, f"/learning/jobs/{job}")
    page = client.get(f"/learning/jobs/{job}/events", params={"since_seq": 3, "limit": 2}).json()
    assert [e["seq"] for e in page["events"]] == [4, 5]
    assert page["has_more"] is True and page["next_seq"] == 5


def test_metrics_newest_first_without_cursor_and_after_step(client: httpx.Client) -> None:
    job = client.post("/learning/jobs", json=replay_body("sft", auto_start=True)).json()["job_id"]
    wait_terminal(client, f"/learning/jobs/{job}")
    recent = client.get(f"/learning/jobs/{job}/metrics", params={"limit": 5, "name": "train.loss"}).json()["points"]
    assert [p["step"] for p in recent] == [116, 117, 118, 119, 120]
    assert all(isinstance(p["value"], float) and p["created_at"] for p in recent)
    after = client.get(f"/learning/jobs/{job}/metrics",
                       params={"after_step": 10, "limit": 3, "name": "train.loss"}).json()["points"]
    assert [p["step"] for p in after] == [11, 12, 13]
    everything = client.get(f"/learning/jobs/{job}/metrics", params={"limit": 10000}).json()["points"]
    losses = [p["value"] for p in everything if p["name"] == "train.loss"]
    assert len(losses) == 120 and sum(losses[:10]) > sum(losses[-10:])  # the demo loss falls


def test_rl_job_auto_starts_and_learning_path_serves_it(client: httpx.Client, task_app) -> None:
    body = {"job_type": "rl", "data": {"endpoint_base_url": task_app(), "base_model": "Qwen/Qwen3-0.6B",
                                       "config": {}}, "metadata": {"local_executor": "replay"}}
    created = client.post("/rl/jobs", json=body, headers={"Idempotency-Key": "rl-once"})
    assert created.status_code == 201 and created.json()["status"] == "running"
    job = created.json()["job_id"]
    replayed = client.post("/rl/jobs", json=body, headers={"Idempotency-Key": "rl-once"})
    assert replayed.status_code == 200 and replayed.json()["job_id"] == job
    done = wait_terminal(client, f"/rl/jobs/{job}")
    assert done["status"] == "succeeded" and done["model"] == "Qwen/Qwen3-0.6B"
    rl_events = client.get(f"/rl/jobs/{job}/events").json()["events"]
    learning_events = client.get(f"/learning/jobs/{job}/events").json()["events"]
    assert rl_events == learning_events  # identical log on the fallback path, so 0.2.24 dedupes by seq
    rewards = [p["value"] for p in client.get(f"/rl/jobs/{job}/metrics", params={"limit": 1000,
                                                                           "name": "train.reward_mean"}).json()["points"]]
    assert sum(rewards[-5:]) > sum(rewards[:5])  # the demo reward rises


def test_prompt_learning_shapes(client: httpx.Client) -> None:
    body = {"algorithm": "mipro", "config_body": {"prompt_learning": {"algorithm": "mipro",
                                                                      "task_app_api_key": ENV_KEY}},
            "overrides": {}, "metadata": {"local_executor": "replay"}, "auto_start": True}
    created = client.post("/prompt-learning/online/jobs", json=body)
    assert created.status_code == 201
    job = created.json()["job_id"]
    assert job.startswith("pl_") and created.json()["algorithm"] == "mipro"
    done = wait_terminal(client, f"/prompt-learning/online/jobs/{job}")
    assert done["status"] == "succeeded" and 0 < done["best_score"] <= 1
    events = client.get(f"/prompt-learning/online/jobs/{job}/events", params={"limit": 10000}).json()
    assert isinstance(events, list)  # bare array, like the hosted backend
    types = [e["type"] for e in events]
    assert types[0] == "prompt.learning.created"
    assert types.index("prompt.learning.mipro.complete") > types.index("mipro.job.completed")
    assert client.get(f"/learning/jobs/{job}").status_code == 404  # no other flow's path leaks it
    listing = client.get("/prompt-learning/online/jobs").json()
    assert isinstance(listing, list) and listing[0]["job_id"] == job
    config = client.get(f"/prompt-learning/online/jobs/{job}/config").text
    assert ENV_KEY not in config and ENV_KEY[-4:] in config


def test_gepa_by_algorithm_uses_its_recording(client: httpx.Client) -> None:
    body = {"algorithm": "gepa", "metadata": {"local_executor": "replay"}}
    job = client.post("/prompt-learning/online/jobs", json=body).json()["job_id"]
    wait_terminal(client, f"/prompt-learning/online/jobs/{job}")
    types = {e["type"] for e in client.get(f"/prompt-learning/online/jobs/{job}/events",
                                           params={"limit": 1000}).json()}
    assert {"prompt.learning.final.results", "prompt.learning.gepa.complete",
            "gepa.transformation.proposed", "prompt.learning.progress"} <= types
    points = client.get(f"/prompt-learning/online/jobs/{job}/metrics").json()["points"]
    # 0.5.0 follows the later name: each point stored under both
    assert {p["name"] for p in points} == {"gepa.transformation.mean_score", "gepa.transformation.mean_reward"}
    by_name = {name: [(p["step"], p["value"]) for p in points if p["name"] == name]
               for name in ("gepa.transformation.mean_score", "gepa.transformation.mean_reward")}
    assert by_name["gepa.transformation.mean_score"] == by_name["gepa.transformation.mean_reward"] != []


def test_missing_executor_is_501_not_a_fake_run(client: httpx.Client, monkeypatch) -> None:
    from synth_nb.local import executors

    monkeypatch.setitem(executors.EXECUTORS, "sft", "synth_nb.local.executors.not_written_yet:Nope")
    response = client.post("/learning/jobs", json={"model": "Qwen/Qwen3-0.6B", "training_file_id": _upload(client)})
    assert response.status_code == 501
    assert "not available" in response.json()["detail"]
    assert client.get("/learning/jobs").json()["jobs"] == []


def test_real_executor_requires_its_fields(client: httpx.Client) -> None:
    response = client.post("/learning/jobs", json={"model": "Qwen/Qwen3-0.6B"})
    assert response.status_code == 422 and "training_file_id is required" in response.json()["detail"]


def test_cancel_queued_and_finished_jobs(client: httpx.Client) -> None:
    job = client.post("/learning/jobs", json=replay_body("sft")).json()["job_id"]
    cancelled = client.post(f"/learning/jobs/{job}/cancel").json()
    assert cancelled["status"] == "cancelled" and cancelled["message"] == "cancelled"
    again = client.post(f"/learning/jobs/{job}/cancel").json()
    assert again["message"] == "job already cancelled"
    assert client.post(f"/learning/jobs/{job}/start").json()["status"] == "cancelled"


def test_cancel_running_replay(client: httpx.Client) -> None:
    job = client.post("/learning/jobs", json=replay_body("sft", speed=1, auto_start=True)).json()["job_id"]
    response = client.post(f"/learning/jobs/{job}/cancel").json()
    assert response["cancel_requested"] is True
    done = wait_terminal(client, f"/learning/jobs/{job}", timeout=5)
    assert done["status"] == "cancelled"
    types = [e["type"] for e in client.get(f"/learning/jobs/{job}/events").json()["events"]]
    assert types[-1] == "sft.job.cancelled"


def test_list_learning_jobs_filters(client: httpx.Client) -> None:
    first = client.post("/learning/jobs", json=replay_body("sft")).json()["job_id"]
    client.post(f"/learning/jobs/{first}/cancel")
    second = client.post("/learning/jobs", json=replay_body("sft")).json()["job_id"]
    listing = client.get("/learning/jobs", params={"status": "queued"}).json()
    assert [j["job_id"] for j in listing["jobs"]] == [second] and listing["data"] == listing["jobs"]
    assert len(client.get("/learning/jobs", params={"limit": 1}).json()["jobs"]) == 1


def test_list_accepts_the_status_cli_type_names(client: httpx.Client) -> None:
    job = client.post("/learning/jobs", json=replay_body("sft")).json()["job_id"]
    assert [j["job_id"] for j in client.get("/v1/learning/jobs", params={"type": "sft_offline"}).json()["jobs"]] == [job]
    assert client.get("/learning/jobs", params={"type": "rl"}).json()["jobs"] == []


def test_openai_style_sft_route_and_model_list(client: httpx.Client) -> None:
    file_id = _upload(client)
    assert client.post("/sft/jobs", json={"model": "Qwen/Qwen3-0.6B", "training_file": "file_nope"}).status_code == 422
    body = replay_body("sft", model="Qwen/Qwen3-0.6B", training_file=file_id, auto_start=True)
    job = client.post("/sft/jobs", json=body).json()
    assert job["training_file_id"] == file_id
    wait_terminal(client, f"/sft/jobs/{job['job_id']}")
    models = client.get("/learning/models").json()["data"]
    assert [(m["id"], m["job_id"], m["base_model"]) for m in models] == [
        ("peft:Qwen/Qwen3-0.6B:demo-sft", job["job_id"], "Qwen/Qwen3-0.6B")]
