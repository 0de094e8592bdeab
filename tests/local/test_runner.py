"""Job runner: executors as plug-ins in worker threads, failures, cancellation, policies served to task apps."""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Iterator

import httpx
import local_executor_doubles as doubles
import pytest
from local_backend_helpers import wait_terminal

from synth_nb.local import LocalBackend, start_backend
from synth_nb.local.executors import EXECUTORS

SECRET = "sk_env_canary_never_shown_9f3e"


@pytest.fixture(autouse=True)
def plugged(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(EXECUTORS, "sft", "local_executor_doubles:Boom")
    monkeypatch.setitem(EXECUTORS, "rl", "local_executor_doubles:Blocking")
    monkeypatch.setitem(EXECUTORS, "gepa", "local_executor_doubles:Stubborn")
    doubles.RELEASE.clear()
    yield
    doubles.RELEASE.set()


def _rl(client: httpx.Client) -> str:
    job: str = client.post("/rl/jobs", json={"data": {"endpoint_base_url": "http://127.0.0.1:9"}}).json()["job_id"]
    return job


def _ready(client: httpx.Client, job: str) -> dict[str, object]:
    for _ in range(200):
        doc: dict[str, object] = client.get(f"/rl/jobs/{job}").json()
        if "policy_url" in doc:
            return doc
        time.sleep(0.02)
    raise AssertionError("the executor never served its policy")


def test_executor_exception_fails_the_job_not_the_server(client: httpx.Client) -> None:
    upload = client.post("/files", files={"file": ("t.jsonl", b"{}\n")}, data={"purpose": "fine-tune"}).json()
    body = {"model": "m", "training_file_id": upload["id"], "auto_start": True, "task_app_api_key": SECRET}
    job = client.post("/learning/jobs", json=body).json()["job_id"]
    done = wait_terminal(client, f"/learning/jobs/{job}")
    assert done["status"] == "failed" and "deliberate executor failure" in done["error"]
    events = client.get(f"/learning/jobs/{job}/events").json()["events"]
    assert [e["type"] for e in events[-2:]] == ["sft.job.failed", "learning.policy.sft.job.failed"]
    assert events[-2]["level"] == events[-1]["level"] == "error"
    assert "RuntimeError" in events[-2]["data"]["traceback"]
    assert client.get("/health").status_code == 200
    everything = json.dumps(events) + json.dumps(done) + client.get(f"/learning/jobs/{job}/config").text
    assert SECRET not in everything and f"••••{SECRET[-4:]}" in everything


def test_validate_rejection_is_422(client: httpx.Client) -> None:
    upload = client.post("/files", files={"file": ("t.jsonl", b"{}\n")}, data={"purpose": "fine-tune"}).json()
    body = {"reject": True, "model": "m", "training_file_id": upload["id"], "task_app_api_key": SECRET}
    response = client.post("/learning/jobs", json=body)
    assert response.status_code == 422 and "reject was set" in response.json()["detail"]
    assert SECRET not in response.text


def test_policy_is_served_until_the_job_ends(backend: LocalBackend, client: httpx.Client) -> None:
    job = _rl(client)
    doc = _ready(client, job)
    assert doc["env_key_seen"] is True and doc["backend_url"] == backend.url
    url = str(doc["policy_url"])
    assert url.startswith(backend.url + "/v1/policies/pol_")
    request = {"model": "x", "messages": [{"role": "user", "content": "ping"}]}
    for suffix in ("/chat/completions", "/v1/chat/completions"):
        answer = httpx.post(url + suffix, json=request, trust_env=False)  # no key: task apps call it
        assert answer.status_code == 200
        assert answer.json()["choices"][0]["message"]["content"] == "echo: ping"
    bad = httpx.post(url + "/chat/completions", json={"model": "x"}, trust_env=False)
    assert bad.status_code == 400 and "messages is required" in bad.json()["detail"]
    malformed = httpx.post(url + "/chat/completions", content=b"{", trust_env=False)
    assert malformed.status_code == 400

    doubles.RELEASE.set()
    assert wait_terminal(client, f"/rl/jobs/{job}")["status"] == "succeeded"
    gone = httpx.post(url + "/chat/completions", json=request, trust_env=False)
    assert gone.status_code == 404


def test_cancel_running_job(client: httpx.Client) -> None:
    job = _rl(client)
    _ready(client, job)
    answer = client.post(f"/rl/jobs/{job}/cancel").json()
    assert answer["cancel_requested"] is True
    done = wait_terminal(client, f"/rl/jobs/{job}")
    assert done["status"] == "cancelled"
    events = client.get(f"/rl/jobs/{job}/events").json()["events"]
    assert events[-1]["type"] == "rl.job.cancelled"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


def test_executor_ignoring_cancel_is_abandoned_after_the_grace_period(client: httpx.Client) -> None:
    body = {"algorithm": "gepa", "config_body": {"prompt_learning": {}}}
    job = client.post("/prompt-learning/online/jobs", json=body).json()["job_id"]
    client.post(f"/prompt-learning/online/jobs/{job}/cancel")
    done = wait_terminal(client, f"/prompt-learning/online/jobs/{job}", timeout=10)  # grace is 2 s here
    assert done["status"] == "cancelled"
    last_seq = done["last_seq"]
    doubles.RELEASE.set()
    time.sleep(0.2)
    events = client.get(f"/prompt-learning/online/jobs/{job}/events").json()
    assert events[-1]["seq"] == last_seq and events[-1]["type"] == "prompt.learning.cancelled"


def test_jobs_run_concurrently(client: httpx.Client) -> None:
    jobs = [_rl(client) for _ in range(3)]
    for job in jobs:
        _ready(client, job)
    assert {client.get(f"/rl/jobs/{j}").json()["status"] for j in jobs} == {"running"}
    doubles.RELEASE.set()
    assert {wait_terminal(client, f"/rl/jobs/{j}")["status"] for j in jobs} == {"succeeded"}


def test_stopping_the_backend_fails_running_jobs(tmp_path) -> None:
    backend = start_backend(data_dir=tmp_path)
    headers = {"Authorization": f"Bearer {backend.api_key}"}
    with httpx.Client(base_url=backend.url + "/api", headers=headers, trust_env=False) as client:
        job = _rl(client)
        _ready(client, job)
    backend.stop()
    backend.stop()  # idempotent
    with start_backend(data_dir=tmp_path) as again, httpx.Client(
            base_url=again.url + "/api", headers={"Authorization": f"Bearer {again.api_key}"},
            trust_env=False) as client:
        doc = client.get(f"/rl/jobs/{job}").json()
        assert doc["status"] == "failed" and "stopped while this job was running" in doc["error"]


def test_a_job_ending_while_its_backend_stops_ends_quietly(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A job whose own ending is still being written when ``stop()`` gives up waiting and closes the store: the
    worker thread drops the late writes, it does not die with ``Cannot operate on a closed database``."""
    backend = start_backend(data_dir=tmp_path)
    runner = backend.app.state.backend.runner
    ending, gate = threading.Event(), threading.Event()

    def held_ending(ctx: object) -> None:  # the job has ended and is writing its last events
        ending.set()
        gate.wait(10)

    monkeypatch.setattr(runner, "before_terminal_event", held_ending)
    monkeypatch.setattr(runner, "shutdown", functools.partial(runner.shutdown, timeout=0.1))
    died: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: died.append(args.exc_value))
    headers = {"Authorization": f"Bearer {backend.api_key}"}
    with httpx.Client(base_url=backend.url + "/api", headers=headers, trust_env=False) as client:
        job = _rl(client)
        _ready(client, job)
    [worker] = [t for t in threading.enumerate() if t.name == f"job-{job}"]
    doubles.RELEASE.set()
    assert ending.wait(10)
    backend.stop()  # the store closes while the job is still writing its ending
    gate.set()
    worker.join(10)
    assert not worker.is_alive() and died == []


def test_non_finite_numbers_never_break_json(client: httpx.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EXECUTORS, "mipro", "local_executor_doubles:NonFinite")
    job = client.post("/prompt-learning/online/jobs", json={"algorithm": "mipro",
                                                            "config_body": {"prompt_learning": {}}}).json()["job_id"]
    done = wait_terminal(client, f"/prompt-learning/online/jobs/{job}")
    assert done["status"] == "succeeded" and done["best_score"] == "nan"
    points = client.get(f"/prompt-learning/online/jobs/{job}/metrics").json()["points"]
    assert [(p["step"], p["value"]) for p in points] == [(1, 1.5)]
    events = client.get(f"/prompt-learning/online/jobs/{job}/events").json()
    warnings = [e for e in events if e["type"] == "metric.non_finite"]
    assert len(warnings) == 1 and warnings[0]["level"] == "warning"
    progress = next(e for e in events if e["type"] == "sft.progress")
    assert progress["data"] == {"loss": "nan", "grad": ["-inf", 1.0]}
