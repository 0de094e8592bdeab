"""``/rl/verify_task_app`` really probes the task app with the backend's key; wrong keys and dead apps are said."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
from local_backend_helpers import API_KEY, ENV_KEY

from synth_nb.local import start_backend


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
