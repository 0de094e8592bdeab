"""Replay executor: recordings re-emitted with their timing; bundled recordings match their generator."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from local_backend_helpers import API_KEY, replay_body, wait_terminal
from make_recordings import BUILDERS, render

from synth_nb.local import start_backend
from synth_nb.local.executors.replay import BUNDLED_DIR, load_recording


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_bundled_recordings_are_the_generator_output(name: str) -> None:
    bundled = (BUNDLED_DIR / f"{name}.jsonl").read_text(encoding="utf-8")
    assert bundled == render(name)
    lines = load_recording(BUNDLED_DIR / f"{name}.jsonl")
    meta = lines[0].payload
    assert lines[0].kind == "meta" and meta["synthetic"] is True and "not a real training run" in meta["description"]


def _write(path: Path, lines: list[dict[str, object]]) -> str:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_custom_recording_timing_results_and_speed(client: httpx.Client, recordings: Path) -> None:
    recording = _write(recordings / "mine.jsonl", [
        {"t": 0, "kind": "meta", "payload": {"flow": "sft"}},
        {"t": 0, "kind": "event", "payload": {"type": "sft.created", "message": "recorded creation"}},
        {"t": 0.1, "kind": "event", "payload": {"type": "sft.progress", "message": "a", "data": {"step": 1}}},
        {"t": 0.2, "kind": "metric", "payload": {"name": "train.loss", "step": 1, "value": 2.0}},
        {"t": 1.0, "kind": "status", "payload": {"status": "succeeded", "fine_tuned_model": "ft:x",
                                                 "updated_at": "ignored"}},
    ])
    job = client.post("/learning/jobs", json=replay_body(recording, speed=2, auto_start=True)).json()["job_id"]
    done = wait_terminal(client, f"/learning/jobs/{job}")
    assert done["status"] == "succeeded" and done["fine_tuned_model"] == "ft:x"
    events = client.get(f"/learning/jobs/{job}/events").json()["events"]
    types = [e["type"] for e in events]
    assert types.count("sft.created") == 1  # the recorded lifecycle copy is skipped
    assert types == ["sft.created", "sft.running", "replay.started", "sft.progress",
                     "learning.policy.sft.job.completed"]  # the later clients' name for the end, added last
    replay_started = next(e for e in events if e["type"] == "replay.started")
    assert replay_started["data"]["speed"] == 2.0
    assert client.get(f"/learning/jobs/{job}/metrics").json()["points"][0]["value"] == 2.0


def test_recorded_failure_fails_the_job(client: httpx.Client, recordings: Path) -> None:
    recording = _write(recordings / "failed.jsonl", [
        {"t": 0, "kind": "event", "payload": {"type": "rl.train.started", "message": "go"}},
        {"t": 0.01, "kind": "status", "payload": {"status": "failed", "error": "CUDA out of memory"}},
    ])
    body = {"data": {"endpoint_base_url": "http://127.0.0.1:9"}, "metadata": {"local_executor": "replay",
                                                                             "recording": recording}}
    job = client.post("/rl/jobs", json=body).json()["job_id"]
    done = wait_terminal(client, f"/rl/jobs/{job}")
    assert done["status"] == "failed" and "CUDA out of memory" in done["error"]
    *_, failed, later = client.get(f"/rl/jobs/{job}/events").json()["events"]
    assert failed["type"] == "rl.job.failed" and failed["level"] == "error" and "CUDA out of memory" in failed["message"]
    assert later["type"] == "learning.policy.rl.job.failed" and later["level"] == "error"


def test_recorded_cancellation_ends_cancelled(client: httpx.Client, recordings: Path) -> None:
    recording = _write(recordings / "cancelled.jsonl", [
        {"t": 0, "kind": "status", "payload": {"status": "cancelled"}},
        {"t": 0, "kind": "event", "payload": {"type": "sft.progress", "message": "never replayed"}},
    ])
    job = client.post("/learning/jobs", json=replay_body(recording, auto_start=True)).json()["job_id"]
    assert wait_terminal(client, f"/learning/jobs/{job}")["status"] == "cancelled"
    types = [e["type"] for e in client.get(f"/learning/jobs/{job}/events").json()["events"]]
    assert "sft.progress" not in types


@pytest.mark.parametrize(("lines", "fragment"), [
    (["not json"], "line 1: not JSON"),
    ([json.dumps({"t": -1, "kind": "event", "payload": {"type": "x"}})], "'t' must be a number"),
    ([json.dumps({"t": 0, "kind": "weird", "payload": {}})], "needs kind"),
    ([json.dumps({"t": 0, "kind": "metric", "payload": {"name": "x", "step": 1.5, "value": 1}})], "integer step"),
    ([json.dumps({"t": 0, "kind": "meta", "payload": {"flow": "rl"}})], "recording is of a rl job"),
    ([], "is empty"),
])
def test_bad_recordings_are_422_at_create(client: httpx.Client, recordings: Path, lines: list[str],
                                         fragment: str) -> None:
    path = recordings / "bad.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    response = client.post("/learning/jobs", json=replay_body(str(path)))
    assert response.status_code == 422
    assert fragment in response.json()["detail"]


def test_unknown_recording_lists_the_bundled_ones(client: httpx.Client) -> None:
    response = client.post("/learning/jobs", json=replay_body("nope"))
    assert response.status_code == 422
    assert "['gepa', 'mipro', 'rl', 'sft']" in response.json()["detail"]


def test_flow_mismatch_between_job_and_bundled_recording(client: httpx.Client) -> None:
    response = client.post("/learning/jobs", json=replay_body("gepa"))
    assert response.status_code == 422 and "prompt_learning job" in response.json()["detail"]


def test_a_recorded_local_job_replays_identically(client: httpx.Client, recordings: Path) -> None:
    """Record a job with synth_nb's own ``Recorder`` (history written as it is polled), replay it, compare."""
    from synth_nb.job.recording import Recorder

    job = client.post("/rl/jobs", json={"metadata": {"local_executor": "replay"}}).json()["job_id"]
    path = recordings / "recorded.jsonl"
    with Recorder(path, secrets=[API_KEY]) as recorder:
        recorder.write("meta", {"job_id": job, "flow": "rl"})
        since, done = 0, False
        while not done:
            status = client.get(f"/rl/jobs/{job}").json()
            done = status["status"] in ("succeeded", "failed", "cancelled")
            for event in client.get(f"/rl/jobs/{job}/events", params={"since_seq": since}).json()["events"]:
                recorder.write("event", event)
                since = event["seq"]
            recorder.write("status", status)
        for point in client.get(f"/rl/jobs/{job}/metrics", params={"limit": 10000}).json()["points"]:
            recorder.write("metric", point)
    again = client.post("/rl/jobs", json={"metadata": {"local_executor": "replay", "recording": str(path)}})
    replayed = again.json()["job_id"]
    doc = wait_terminal(client, f"/rl/jobs/{replayed}")
    assert doc["status"] == "succeeded" and doc["fine_tuned_model"] == "rl:Qwen/Qwen3-0.6B:demo-rl"

    def shape(job_id: str) -> tuple[list[str], list[tuple[str, int, float]]]:
        events = client.get(f"/rl/jobs/{job_id}/events", params={"limit": 1000}).json()["events"]
        points = client.get(f"/rl/jobs/{job_id}/metrics", params={"limit": 10000}).json()["points"]
        return [e["type"] for e in events], sorted((p["name"], p["step"], p["value"]) for p in points)

    assert shape(replayed) == shape(job)
    assert API_KEY not in path.read_text()


@pytest.mark.parametrize("where", ["absolute", "traversal", "symlink"])
def test_recordings_outside_the_allowed_places_are_refused(client: httpx.Client, recordings: Path,
                                                          tmp_path: Path, where: str) -> None:
    outside = _write(tmp_path / "outside.jsonl", [{"t": 0, "kind": "event", "payload": {"type": "sft.progress"}}])
    if where == "symlink":
        (recordings / "link.jsonl").symlink_to(outside)
    asked = {"absolute": outside, "traversal": "../outside.jsonl", "symlink": "link"}[where]
    response = client.post("/learning/jobs", json=replay_body(asked))
    assert response.status_code == 400, response.text
    detail = response.json()["detail"]
    assert "['gepa', 'mipro', 'rl', 'sft']" in detail and str(recordings.resolve()) in detail
    assert client.get("/learning/jobs").json()["jobs"] == []


def test_a_server_file_cannot_be_replayed_by_default(tmp_path: Path) -> None:
    with start_backend(data_dir=tmp_path / "data", api_key=API_KEY) as running, httpx.Client(
            base_url=running.api_url, headers={"Authorization": f"Bearer {API_KEY}"}, trust_env=False) as http:
        for asked in ("/etc/passwd", str(running.data_dir / "backend.sqlite3")):
            response = http.post("/learning/jobs", json=replay_body(asked))
            assert response.status_code == 400 and "outside the places replays may read" in response.json()["detail"]
        assert str(running.data_dir / "recordings") in response.json()["detail"]
        assert http.post("/learning/jobs", json=replay_body("sft")).status_code == 201  # bundled ones still work
