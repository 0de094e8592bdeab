"""SSE on ``…/events/stream`` (and ``…/events`` with ``Accept: text/event-stream``): framing, resume, keep-alive."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import httpx
import pytest
from httpx_sse import connect_sse
from local_backend_helpers import replay_body, wait_terminal

FLOW_PATHS = {
    "sft": ("/learning/jobs", replay_body("sft", auto_start=True)),
    "rl": ("/rl/jobs", {"data": {"endpoint_base_url": "http://127.0.0.1:9"}, "metadata": {"local_executor": "replay"}}),
    "prompt_learning": ("/prompt-learning/online/jobs", {"algorithm": "gepa", "metadata": {"local_executor": "replay"}}),
}


@pytest.mark.parametrize("flow", sorted(FLOW_PATHS))
def test_stream_delivers_every_event_once_then_closes(client: httpx.Client, flow: str) -> None:
    base, body = FLOW_PATHS[flow]
    job = client.post(base, json=body).json()["job_id"]
    seen: list[int] = []
    with connect_sse(client, "GET", f"{base}/{job}/events/stream") as source:
        assert source.response.headers["content-type"].startswith("text/event-stream")
        for sse in source.iter_sse():
            if not sse.data:  # a keep-alive comment while the end waits for a status read (httpx-sse makes
                continue      # an empty event of a comment once an id was seen)
            event = json.loads(sse.data)
            assert sse.id == str(event["seq"]) and sse.event == event["type"]
            seen.append(event["seq"])
    assert client.get(f"{base}/{job}").json()["status"] == "succeeded"
    assert seen == list(range(1, len(seen) + 1))
    final_seq = client.get(f"{base}/{job}").json()["last_seq"]
    assert seen[-1] == final_seq


def test_resume_with_since_seq_and_last_event_id(client: httpx.Client) -> None:
    job = client.post("/learning/jobs", json=replay_body("sft", auto_start=True)).json()["job_id"]
    wait_terminal(client, f"/learning/jobs/{job}")
    with connect_sse(client, "GET", f"/learning/jobs/{job}/events/stream", params={"since_seq": 10}) as source:
        by_query = [int(s.id) for s in source.iter_sse()]
    with connect_sse(client, "GET", f"/learning/jobs/{job}/events/stream",
                     headers={"Last-Event-ID": "10"}) as source:
        by_header = [int(s.id) for s in source.iter_sse()]
    assert by_query == by_header and by_query[0] == 11


def test_events_path_negotiates_sse(client: httpx.Client) -> None:
    job = client.post("/learning/jobs", json=replay_body("sft", auto_start=True)).json()["job_id"]
    wait_terminal(client, f"/learning/jobs/{job}")
    response = client.get(f"/learning/jobs/{job}/events", headers={"Accept": "text/event-stream"})
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.text.startswith(": connected\n\n") and "\ndata: {" in response.text
    plain = client.get(f"/learning/jobs/{job}/events")
    assert plain.headers["content-type"].startswith("application/json")


def test_live_events_and_keepalives(client: httpx.Client) -> None:
    """A queued job's stream stays open with keep-alives, then carries events as they happen."""
    job = client.post("/learning/jobs", json=replay_body("sft")).json()["job_id"]
    lines: list[str] = []
    with client.stream("GET", f"/learning/jobs/{job}/events/stream", params={"since_seq": 0}) as response:
        for line in response.iter_lines():
            if line == ": keep-alive" and ": keep-alive" not in lines:  # idle stream: start the job now
                client.post(f"/learning/jobs/{job}/start")
            lines.append(line)
    data = [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data: ")]
    assert data[0]["type"] == "sft.created"
    assert [d["type"] for d in data[-2:]] == ["sft.job.completed", "learning.policy.sft.job.completed"]
    assert lines.index(": keep-alive") < next(i for i, line in enumerate(lines) if '"sft.running"' in line)


def test_bad_resume_cursor_is_422(client: httpx.Client) -> None:
    job = client.post("/learning/jobs", json=replay_body("sft")).json()["job_id"]
    response = client.get(f"/learning/jobs/{job}/events/stream", headers={"Last-Event-ID": "abc"})
    assert response.status_code == 422 and "Last-Event-ID" in response.json()["detail"]


def test_open_streams_end_when_the_backend_stops(tmp_path: Path) -> None:
    from synth_nb.local import start_backend

    backend = start_backend(data_dir=tmp_path)
    http = httpx.Client(base_url=backend.api_url, headers={"Authorization": f"Bearer {backend.api_key}"},
                        trust_env=False, timeout=30)
    job = http.post("/learning/jobs", json=replay_body("sft")).json()["job_id"]  # queued: would stream forever
    lines: list[str] = []

    def consume() -> None:
        with http.stream("GET", f"/learning/jobs/{job}/events/stream") as response:
            for line in response.iter_lines():
                lines.append(line)

    reader = threading.Thread(target=consume)
    reader.start()
    while not lines:
        time.sleep(0.01)
    backend.stop()
    reader.join(timeout=20)
    http.close()
    assert not reader.is_alive() and lines[0] == ": connected"
