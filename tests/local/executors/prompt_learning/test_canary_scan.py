"""Canary scan: after real jobs, no secret appears in any file of the data dir, any log line or any GET answer."""

from __future__ import annotations

import logging
import secrets
import time
from pathlib import Path

import httpx
import pytest
from prompt_learning_bodies import body_from_config

from synth_nb.local import start_backend
from synth_nb.local.examples import start_task_app

API_CANARY = f"sk_local_canary_{secrets.token_hex(12)}"
ENV_CANARY = f"sk_env_canary_{secrets.token_hex(12)}"
TASK_APP_CANARY = f"sk_task_canary_{secrets.token_hex(12)}"
POLICY_CANARY = f"sk_policy_canary_{secrets.token_hex(12)}"
CANARIES = (API_CANARY, ENV_CANARY, TASK_APP_CANARY, POLICY_CANARY)


def _tiny_gepa(task_app_url: str) -> dict:
    body = body_from_config("banking_gepa.toml", _App(task_app_url), rollout__budget=40,
                            rollout__minibatch_size=4, rollout__max_concurrent=4,
                            evaluation__train_seeds=list(range(8)), evaluation__val_seeds=list(range(80, 88)),
                            evaluation__test_pool=list(range(8)), evaluation__validation_top_k=1)
    body["config_body"]["prompt_learning"]["policy"]["api_key"] = POLICY_CANARY  # a secret the body carries
    return {**body, "auto_start": True}


class _App:
    def __init__(self, url: str) -> None:
        self.url, self.api_key = url, TASK_APP_CANARY


def _wait(client: httpx.Client, path: str) -> dict:
    deadline = time.monotonic() + 600  # a guard against hanging, not a speed assertion
    while True:
        doc: dict = client.get(path).json()
        if doc["status"] in ("succeeded", "failed", "cancelled") or time.monotonic() > deadline:
            return doc
        time.sleep(0.2)


def _every_get(client: httpx.Client, jobs: dict[str, str]) -> list[str]:
    """The text of every GET that returns job or file data, SSE streams included."""
    answers = [client.get(path).text for path in ("/learning/jobs", "/rl/jobs", "/prompt-learning/online/jobs",
                                                   "/sft/jobs", "/learning/models", "/files", "/health")]
    for job_id, base in jobs.items():
        for suffix in ("", "/status", "/config", "/events?limit=10000", "/metrics?limit=10000", "/timeline",
                       "/events/stream"):
            answers.append(client.get(f"{base}/{job_id}{suffix}").text)
    return answers


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _leaks(named: dict[str, bytes | str]) -> list[tuple[str, str]]:
    found = []
    for where, content in named.items():
        data = content.encode() if isinstance(content, str) else content
        found += [(where, canary[:14]) for canary in CANARIES if canary.encode() in data]
    return found


def test_no_canary_in_files_logs_or_answers(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                            capfd: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    data_dir = tmp_path / "data"
    with start_task_app("banking", api_key=TASK_APP_CANARY) as task_app, start_backend(
            data_dir=data_dir, api_key=API_CANARY, environment_api_key=ENV_CANARY) as backend, httpx.Client(
            base_url=backend.api_url, headers={"Authorization": f"Bearer {API_CANARY}"}, timeout=60,
            trust_env=False) as client:
        gepa = client.post("/prompt-learning/online/jobs", json=_tiny_gepa(task_app.url))
        assert gepa.status_code == 201, gepa.text
        replay = client.post("/rl/jobs", json={"metadata": {"local_executor": "replay", "replay_speed": 50,
                                                            "task_app_api_key": TASK_APP_CANARY},
                                               "data": {"endpoint_base_url": task_app.url}})
        assert replay.status_code == 201, replay.text
        jobs = {gepa.json()["job_id"]: "/prompt-learning/online/jobs", replay.json()["job_id"]: "/rl/jobs"}
        done = _wait(client, f"/prompt-learning/online/jobs/{gepa.json()['job_id']}")
        assert done["status"] == "succeeded", done  # the task app took its key: the executor had it
        assert _wait(client, f"/rl/jobs/{replay.json()['job_id']}")["status"] == "succeeded"
        answers = _every_get(client, jobs)
        config = client.get(f"/prompt-learning/online/jobs/{gepa.json()['job_id']}/config").json()
        assert config["config"]["config_body"]["prompt_learning"]["task_app_api_key"] == f"••••{TASK_APP_CANARY[-4:]}"
        while_running = _files(data_dir)
    after_stop = _files(data_dir)
    out, err = capfd.readouterr()
    assert any(name.endswith("backend.sqlite3") for name in after_stop)
    assert _leaks({f"running:{k}": v for k, v in while_running.items()}) == []
    assert _leaks({f"stopped:{k}": v for k, v in after_stop.items()}) == []
    assert _leaks({f"GET {i}": text for i, text in enumerate(answers)}) == []
    assert _leaks({"logs": caplog.text, "stdout": out, "stderr": err}) == []
