"""A backend holding no ENVIRONMENT_API_KEY (as ``synth-nb backend --start`` runs it) uses its own example task
apps' key for its own ``/task-apps/*`` URLs, probe and job alike, and says so once; any other task app still
needs its key handed over."""

from __future__ import annotations

import logging
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from local_backend_helpers import API_KEY, ENV_KEY
from minimal_configs import LOCAL_GEPA
from task_app_stub import create_stub_app

from synth_nb.local import LocalBackend, start_backend
from synth_nb.local.examples._serve import serve_in_thread
from synth_nb.local.own_task_apps import job_task_url, own_example


@pytest.fixture
def keyless(tmp_path: Path) -> Iterator[tuple[LocalBackend, httpx.Client]]:
    with start_backend(data_dir=tmp_path / "data", api_key=API_KEY, environment_api_key="") as backend, \
            httpx.Client(base_url=backend.api_url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=60,
                         trust_env=False) as client:
        yield backend, client


def _said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "no ENVIRONMENT_API_KEY was handed over" in r.getMessage()]


def test_the_rl_probe_of_its_own_example_app_uses_its_own_key_and_says_so_once(
        keyless: tuple[LocalBackend, httpx.Client], caplog: pytest.LogCaptureFixture) -> None:
    backend, client = keyless
    caplog.set_level(logging.WARNING, logger="synth_nb.local.own_task_apps")
    own = backend.task_app_url("charclass")
    for url in (own, own + "/", own.replace("127.0.0.1", "localhost")):
        answer = client.post("/rl/verify_task_app", json={"endpoint_base_url": url})
        body = answer.json()
        assert body["any_ok"] is True, body
        assert body["candidates_first15"] == [f"••••{backend.task_app_key[-4:]}"]
        assert backend.task_app_key not in answer.text
    assert _said(caplog) == [
        f"no ENVIRONMENT_API_KEY was handed over: using the key of this backend's own bundled example task app "
        f"'charclass' for {own}",
        f"no ENVIRONMENT_API_KEY was handed over: using the key of this backend's own bundled example task app "
        f"'charclass' for {own.replace('127.0.0.1', 'localhost')}"]  # once per URL, not once per probe


def test_a_foreign_task_app_still_needs_its_key_handed_over(keyless: tuple[LocalBackend, httpx.Client],
                                                            caplog: pytest.LogCaptureFixture) -> None:
    backend, client = keyless
    stub = create_stub_app(ENV_KEY)
    with serve_in_thread(stub, name="stub") as foreign:
        body = client.post("/rl/verify_task_app", json={"endpoint_base_url": foreign.url}).json()
        assert body["any_ok"] is False and "this backend holds no ENVIRONMENT_API_KEY" in body["detail"]
        # the example key is for the backend's own port only: a look-alike path elsewhere is refused it
        body = client.post("/rl/verify_task_app",
                           json={"endpoint_base_url": foreign.url + "/task-apps/charclass"}).json()
        assert body["any_ok"] is False and body["candidates_first15"] == []
    assert _said(caplog) == []


def test_own_example_is_the_backends_own_port_and_path_only() -> None:
    ours = "http://127.0.0.1:8000"
    assert own_example("http://127.0.0.1:8000/task-apps/banking", ours) == "banking"
    assert own_example("http://localhost:8000/task-apps/banking/", ours) == "banking"
    assert own_example("http://127.0.0.1:8001/task-apps/banking", ours) is None
    assert own_example("http://10.0.0.2:8000/task-apps/banking", ours) is None
    assert own_example("http://u:p@127.0.0.1:8000/task-apps/banking", ours) is None
    assert own_example("http://127.0.0.1:8000/task-apps/banking?x=1", ours) is None
    assert own_example("http://127.0.0.1:8000/task-apps/nope", ours) is None
    assert own_example("http://127.0.0.1:8000/other/task-apps/banking", ours) is None
    assert own_example("http://127.0.0.1:99999/task-apps/banking", ours) is None  # not a port: not ours
    assert job_task_url("rl", {"data": {"endpoint_base_url": "http://a"}}) == "http://a"
    assert job_task_url("rl", {"data": {"config": {"services": {"task_url": "http://b"}}}}) == "http://b"
    assert job_task_url("prompt_learning", {"config_body": {"prompt_learning": {"task_app_url": "http://c"}}}) == "http://c"
    assert job_task_url("sft", {"model": "m"}) is None


def test_a_gepa_job_on_its_own_banking_app_runs_with_no_key_held(keyless: tuple[LocalBackend, httpx.Client],
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    backend, client = keyless
    caplog.set_level(logging.WARNING, logger="synth_nb.local.own_task_apps")
    url = backend.task_app_url("banking")
    section = tomllib.loads(LOCAL_GEPA.format(task_url=url, budget=40))["prompt_learning"]
    created = client.post("/prompt-learning/online/jobs",
                          json={"algorithm": "gepa", "config_body": {"prompt_learning": section}})
    assert created.status_code == 201, created.text
    job_id = created.json()["job_id"]
    deadline = time.monotonic() + 300  # a guard against a hang, not a speed check
    while (status := client.get(f"/prompt-learning/online/jobs/{job_id}").json())["status"] not in (
            "succeeded", "failed", "cancelled") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status["status"] == "succeeded", status.get("error")
    assert isinstance(status["best_score"], float) and status["best_score"] > 0
    assert len(_said(caplog)) == 1
    stored = b"".join(p.read_bytes() for p in backend.data_dir.rglob("*") if p.is_file())
    assert backend.task_app_key.encode() not in stored
