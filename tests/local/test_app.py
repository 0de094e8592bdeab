"""The HTTP surface as a whole: bearer auth, JSON errors for bad input (never 500), route mirrors."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from local_backend_helpers import API_KEY

from synth_nb.local import LocalBackend, start_backend


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalBackend]:
    """One server for these tests: none of them depends on another's jobs."""
    with start_backend(data_dir=tmp_path_factory.mktemp("app"), api_key=API_KEY) as running:
        yield running


def test_health_needs_the_key(backend: LocalBackend, client: httpx.Client) -> None:
    assert client.get("/health").json()["status"] == "ok"
    anonymous = httpx.get(backend.url + "/api/health", trust_env=False)
    assert anonymous.status_code == 401
    assert anonymous.headers["content-type"].startswith("application/json")
    assert "API key" in anonymous.json()["detail"]


@pytest.mark.parametrize("headers", [
    {"Authorization": "Bearer wrong-key"},
    {"Authorization": f"Basic {API_KEY}"},
    {"Authorization": "Bearer"},
    {"X-API-Key": "nope"},
])
def test_wrong_auth_is_401_json(backend: LocalBackend, headers: dict[str, str]) -> None:
    response = httpx.post(backend.url + "/api/learning/jobs", json={}, headers=headers, trust_env=False)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert API_KEY not in response.text


def test_x_api_key_is_accepted(backend: LocalBackend) -> None:
    response = httpx.get(backend.url + "/api/health", headers={"X-API-Key": API_KEY}, trust_env=False)
    assert response.status_code == 200


def test_api_v1_mirror_serves_the_same_routes(client: httpx.Client) -> None:
    created = client.post("/learning/jobs", json={"metadata": {"local_executor": "replay"}}).json()
    mirrored = client.get(f"/v1/learning/jobs/{created['job_id']}")
    assert mirrored.status_code == 200
    assert mirrored.json()["job_id"] == created["job_id"]


@pytest.mark.parametrize(("method", "path", "kwargs", "status"), [
    ("POST", "/learning/jobs", {"content": b"{not json"}, 400),
    ("POST", "/learning/jobs", {"content": b""}, 400),
    ("POST", "/learning/jobs", {"content": b"[1, 2]"}, 422),
    ("POST", "/learning/jobs", {"content": b"\xff\xfe"}, 400),
    ("POST", "/learning/jobs", {"content": b'{"model": NaN}'}, 400),
    ("POST", "/learning/jobs", {"content": b'{"metadata": {"local_executor": "replay", "replay_speed": Infinity}}'}, 400),
    ("POST", "/learning/jobs", {"json": {"model": 5}}, 422),
    ("POST", "/learning/jobs", {"json": {"model": "Qwen/Qwen3-0.6B", "hyperparameters": []}}, 422),
    ("POST", "/learning/jobs", {"json": {"metadata": "x"}}, 422),
    ("POST", "/learning/jobs", {"json": {"metadata": {"local_executor": "nope"}}}, 422),
    ("POST", "/learning/jobs", {"json": {"metadata": {"local_executor": "replay", "replay_speed": 0}}}, 422),
    ("POST", "/learning/jobs", {"json": {"metadata": {"local_executor": "replay", "replay_speed": "x"}}}, 422),
    ("POST", "/learning/jobs", {"json": {"metadata": {"local_executor": "replay", "replay_speed": 1e-300}}}, 422),
    ("POST", "/learning/jobs", {"json": {"metadata": {"local_executor": "replay", "replay_speed": -2}}}, 422),
    ("POST", "/learning/jobs", {"json": {"auto_start": "yes", "metadata": {"local_executor": "replay"}}}, 422),
    ("POST", "/rl/jobs", {"json": {"data": {"endpoint_base_url": 3}}}, 422),
    ("POST", "/rl/jobs", {"json": {"data": {"endpoint_base_url": "file:///etc"}}}, 422),
    ("POST", "/rl/jobs", {"json": {"data": []}}, 422),
    ("POST", "/prompt-learning/online/jobs", {"json": {"algorithm": "evolve"}}, 422),
    ("POST", "/prompt-learning/online/jobs", {"json": {"algorithm": "gepa", "config_body": 1}}, 422),
    ("GET", "/learning/jobs/job_missing", {}, 404),
    ("GET", "/learning/jobs/job_missing/events", {}, 404),
    ("GET", "/learning/jobs/job_missing/events/stream", {}, 404),
    ("POST", "/learning/jobs/job_missing/cancel", {}, 404),
    ("POST", "/learning/jobs/job_missing/start", {}, 404),
    ("GET", "/rl/jobs/job_missing/metrics", {}, 404),
    ("GET", "/prompt-learning/online/jobs/pl_missing", {}, 404),
    ("GET", "/orchestration/jobs/job_x", {}, 404),
    ("GET", "/orchestration/jobs/job_x/events", {}, 404),
    ("GET", "/no/such/route", {}, 404),
    ("DELETE", "/health", {}, 405),
    ("POST", "/rl/verify_task_app", {"json": {"endpoint_base_url": 12}}, 422),
    ("POST", "/rl/verify_task_app", {"content": b"nope"}, 400),
])
def test_bad_input_is_4xx_json(client: httpx.Client, method: str, path: str, kwargs: dict[str, object],
                              status: int) -> None:
    response = client.request(method, path, **kwargs)  # type: ignore[arg-type]
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert isinstance(response.json()["detail"], str) and response.json()["detail"]


def test_bad_query_parameters_are_422(client: httpx.Client) -> None:
    job = client.post("/learning/jobs", json={"metadata": {"local_executor": "replay"}}).json()["job_id"]
    for params in ({"since_seq": "abc"}, {"limit": "0"}, {"limit": "many"}, {"after_step": "x"}):
        path = f"/learning/jobs/{job}/metrics" if "after_step" in params else f"/learning/jobs/{job}/events"
        response = client.get(path, params=params)
        assert response.status_code == 422, params
        assert "detail" in response.json()


def test_policy_routes_need_no_key_and_404_unknown_ids(backend: LocalBackend) -> None:
    response = httpx.post(backend.url + "/v1/policies/pol_unknown/chat/completions", json={"messages": []},
                          trust_env=False)
    assert response.status_code == 404
    assert "no running job" in response.json()["detail"]


class _QuickHandler:
    """A policy handler that answers some requests on the event loop (``answer_now``), the rest in a thread."""

    def __init__(self) -> None:
        self.threaded = 0

    def __call__(self, request: dict[str, object]) -> dict[str, object]:
        self.threaded += 1
        return {"answered": "in a thread"}

    def answer_now(self, request: dict[str, object]) -> dict[str, object] | None:
        return {"answered": "now"} if request.get("quick") else None


def test_policy_routes_answer_now_when_the_handler_can(backend: LocalBackend) -> None:
    handler = _QuickHandler()
    policy_id = backend.app.state.backend.runner.policies.add("job_quick", handler)
    try:
        url = f"{backend.url}/v1/policies/{policy_id}/v1/chat/completions"
        assert httpx.post(url, json={"quick": True}, trust_env=False).json() == {"answered": "now"}
        assert httpx.post(url, json={"quick": False}, trust_env=False).json() == {"answered": "in a thread"}
        assert handler.threaded == 1
        bad = httpx.post(url, content=b'{"quick": NaN}', trust_env=False)
        assert bad.status_code == 400 and "not valid JSON" in bad.json()["detail"]
        other = httpx.get(url, trust_env=False)  # not a policy call: the app's own JSON answer
        assert other.status_code in (404, 405) and "detail" in other.json()
    finally:
        backend.app.state.backend.runner.policies.remove_job("job_quick")
