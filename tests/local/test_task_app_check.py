"""``/rl/verify_task_app`` really probes the task app with the backend's key; wrong keys and dead apps are said."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
from local_backend_helpers import API_KEY, ENV_KEY
from task_app_stub import create_stub_app

from synth_nb.local import start_backend
from synth_nb.local.examples._serve import serve_in_thread
from synth_nb.local.urls import endpoint


def test_verify_task_app_probes_health_and_task_info(client: httpx.Client, task_app: Callable[[], str]) -> None:
    answer = client.post("/rl/verify_task_app", json={"endpoint_base_url": task_app() + "/"})
    assert answer.status_code == 200
    body = answer.json()
    assert body["any_ok"] is True
    assert body["attempts"][0]["health_status"] == 200 and body["attempts"][0]["task_info_status"] == 200
    assert ENV_KEY not in answer.text and body["candidates_first15"] == [f"••••{ENV_KEY[-4:]}"]


def test_verify_task_app_with_the_wrong_key(tmp_path: Path, task_app: Callable[[], str]) -> None:
    with start_backend(data_dir=tmp_path, api_key=API_KEY, environment_api_key="sk_env_wrong_key_99999") as b, \
            httpx.Client(base_url=b.api_url, headers={"Authorization": f"Bearer {API_KEY}"}, trust_env=False) as c:
        body = c.post("/rl/verify_task_app", json={"endpoint_base_url": task_app()}).json()
    assert body["any_ok"] is False and body["attempts"][0]["health_status"] == 400
    assert "refused the ENVIRONMENT_API_KEY this backend holds" in body["detail"]


def test_verify_unreachable_task_app(client: httpx.Client) -> None:
    body = client.post("/rl/verify_task_app", json={"endpoint_base_url": "http://127.0.0.1:9"}).json()
    assert body["any_ok"] is False and "ConnectError" in body["attempts"][0]["error"]


def test_a_query_string_in_the_task_app_url_stays_after_the_path(client: httpx.Client) -> None:
    """``http://host/?route=a`` + ``/health`` is ``http://host/health?route=a``, not ``...?route=a/health``."""
    stub = create_stub_app(ENV_KEY)
    with serve_in_thread(stub, name="stub") as served:
        answer = client.post("/rl/verify_task_app", json={"endpoint_base_url": served.url + "/?route=a"}).json()
    assert answer["any_ok"] is True, answer
    assert stub.state.seen == [("/health", "route=a"), ("/task_info", "route=a")]


def test_endpoint_joins_before_the_query() -> None:
    assert endpoint("http://h:1/app/?t=x#f", "/rollout") == "http://h:1/app/rollout?t=x"
    assert endpoint("http://h:1", "/health") == "http://h:1/health"
