"""A job of the backend calls the example task app the backend serves itself in-process (no HTTP request for
``/rollout`` or the policy route reaches the server), with the results of the same job over HTTP; a task app
on another server still gets HTTP, and a refusal (wrong key, oversized body) is the same on both transports."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest
from prompt_learning_bodies import small_gepa
from prompt_learning_support import TASK_APP_KEY
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from synth_nb.local.examples import task_app_path
from synth_nb.local.examples._serve import ServerHandle, serve_in_thread
from synth_nb.local.examples.contract import MAX_ROLLOUT_BYTES
from synth_nb.local.executors.prompt_learning.rollouts import MAX_ANSWER_BYTES, RolloutBudget, TaskAppRunner
from synth_nb.local.lifecycle import TERMINAL
from synth_nb.local.server import policy_proxy
from synth_nb.local.server.app import close_app, create_app

API_KEY = "sk_local_inprocess_canary_4e1d"
MAX_JSON = 256 * 1024


class CountingApp:
    """The backend's ASGI app, with the path of every HTTP request that reaches the server noted."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.paths: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.paths.append(scope["path"])
        await self.app(scope, receive, send)


class Backend:
    def __init__(self, app: Starlette, counted: CountingApp, server: ServerHandle) -> None:
        self.app, self.counted, self.url = app, counted, server.url
        self.client = httpx.Client(base_url=server.url + "/api", headers={"Authorization": f"Bearer {API_KEY}"},
                                   timeout=60, trust_env=False)

    @property
    def mounted_url(self) -> str:
        return self.url + task_app_path("banking")

    def run(self, body: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        job_id = self.client.post("/prompt-learning/online/jobs", json={**body, "auto_start": True}).json()["job_id"]
        deadline = time.monotonic() + 300  # a guard against hanging, not a speed assertion
        while (status := self.client.get(f"/prompt-learning/online/jobs/{job_id}").json())["status"] not in TERMINAL:
            assert time.monotonic() < deadline, status
            time.sleep(0.1)
        events = self.client.get(f"/prompt-learning/online/jobs/{job_id}/events", params={"limit": 10000}).json()
        return status, events["events"] if isinstance(events, dict) else events


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """The real backend app (the examples' key is the test task app's) on 127.0.0.1, its requests counted."""
    app = create_app(tmp_path_factory.mktemp("data"), API_KEY, task_app_key=TASK_APP_KEY, environment_api_key="",
                     max_json_bytes=MAX_JSON)
    counted = CountingApp(app)
    server = serve_in_thread(counted, name="counted-backend")
    served = Backend(app, counted, server)
    served.client.get("/health")  # the backend learns its own address from its first request
    yield served
    served.client.close()
    server.stop()
    close_app(app)


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["data"] for e in events if e["type"] == kind]


def _results(status: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    done = _of(events, "prompt.learning.completed")[0]
    return {"best_score": status["best_score"], "rollouts": (done["rollouts_completed"], done["heldout_rollouts"]),
            "held_out": [(d.get("candidate_index"), d["instance_scores"])
                         for d in _of(events, "prompt.learning.validation.scored")]}


def test_a_job_on_the_backends_own_example_calls_it_in_process_with_the_same_results_as_over_http(
        backend: Backend, task_app: Any) -> None:
    on_own_server = small_gepa(task_app, budget=48)
    mounted = small_gepa(task_app, budget=48)
    mounted["config_body"]["prompt_learning"]["task_app_url"] = backend.mounted_url

    before = len(backend.counted.paths)
    status, events = backend.run(mounted)
    assert status["status"] == "succeeded", [e["message"] for e in events if e["level"] == "error"]
    assert _of(events, "prompt.learning.task_app.ready")[0]["transport"] == "in-process"
    seen = backend.counted.paths[before:]
    assert not [p for p in seen if p.endswith("/rollout") or p.startswith(policy_proxy.PREFIX)], seen
    assert task_app_path("banking") + "/health" in seen  # the job's check of the task app is still HTTP

    before = len(backend.counted.paths)
    http_status, http_events = backend.run(on_own_server)
    assert http_status["status"] == "succeeded"
    assert _of(http_events, "prompt.learning.task_app.ready")[0]["transport"] == "http"
    seen = backend.counted.paths[before:]
    results = _results(http_status, http_events)
    # every rollout's policy call came over HTTP; the rollouts went to the task app's own server
    assert len([p for p in seen if p.startswith(policy_proxy.PREFIX)]) == sum(results["rollouts"]) > 0
    assert not [p for p in seen if p.endswith("/rollout")]

    assert results["held_out"] and results["rollouts"][1] > 0  # held-out scores per seed, compared below
    assert _results(status, events) == results


def test_only_urls_provably_of_this_backend_are_called_in_process(backend: Backend) -> None:
    served = backend.app.state.backend.runner.task_apps_in_process
    port = backend.url.rsplit(":", 1)[1]
    assert served(backend.mounted_url, backend.url) is not None
    assert served(backend.mounted_url + "/", backend.url) is not None
    for url in (backend.mounted_url.replace("127.0.0.1", "localhost"),  # may be another program on ::1
                f"http://127.0.0.1:{int(port) + 1}{task_app_path('banking')}",
                backend.mounted_url + "?token=x", backend.mounted_url.replace("http://", "https://"),
                backend.mounted_url.replace("http://", "http://u:p@"), backend.url + "/task-apps/nope"):
        assert served(url, backend.url) is None, url
    policies = policy_proxy.in_process(backend.app.state.backend)
    route = f"{backend.url}/v1/policies/pol_abc/chat/completions"
    assert policies(route) is not None and policies(route + "?cid=c1") is not None
    for url in (route.replace("127.0.0.1", "localhost"), route.replace("http://", "https://"),
                route.replace(f":{port}", f":{int(port) + 1}"), route.replace("pol_abc", "pol%2Fabc"),
                f"{backend.url}/v1/policies/a/b/chat/completions", f"{backend.url}/api/health"):
        assert policies(url) is None, url


def _rollout_body(inference_url: str) -> bytes:
    return msgspec.json.encode({
        "run_id": "r1", "mode": "eval", "ops": ["agent", "env"], "env": {"seed": 1, "config": {"split": "train"}},
        "policy": {"config": {"inference_url": inference_url}}})


def test_a_rollout_is_refused_the_same_way_in_process_and_over_http(backend: Backend) -> None:
    answer = backend.app.state.backend.runner.task_apps_in_process(backend.mounted_url, backend.url)
    body = _rollout_body(f"{backend.url}/v1/policies/pol_gone")
    cases: list[tuple[str | None, bytes, int]] = [
        (None, body, 401), ("sk_env_wrong", body, 401),
        (TASK_APP_KEY, b" " * (MAX_ROLLOUT_BYTES + 1), 413), (TASK_APP_KEY, b"{not json", 400),
        (TASK_APP_KEY, b"[1]", 422), (TASK_APP_KEY, msgspec.json.encode({"run_id": "r1"}), 422),
        (TASK_APP_KEY, body, 502)]  # a policy route no job serves: the policy call fails on both transports
    with httpx.Client(trust_env=False, timeout=60) as http:
        for key, content, expected in cases:
            over_http = http.post(backend.mounted_url + "/rollout", content=content,
                                  headers={"X-API-Key": key} if key else {})
            status, raw = asyncio.run(answer([key] if key else [], content))
            assert (status, raw) == (over_http.status_code, over_http.content) and status == expected, (key, raw)
    assert TASK_APP_KEY.encode() not in raw


def test_a_policy_call_is_refused_the_same_way_in_process_and_over_http(backend: Backend) -> None:
    runner = backend.app.state.backend.runner
    policy_id = runner.policies.add("test_job", lambda request: {"choices": [], "echo": request["model"]})
    local = policy_proxy.in_process(backend.app.state.backend)
    try:
        route = f"{backend.url}/v1/policies/{policy_id}/chat/completions"
        cases = [(route, b'{"model": "m"}', 200), (route, b" " * (MAX_JSON + 1), 413), (route, b"[]", 422),
                 (route, b'{"messages": 1}', 400),
                 (f"{backend.url}/v1/policies/pol_gone/chat/completions", b'{"model": "m"}', 404)]
        with httpx.Client(trust_env=False, timeout=60) as http:
            for url, content, expected in cases:
                over_http = http.post(url, content=content)
                answer = local(url)
                assert answer is not None
                status, raw = asyncio.run(answer(content))
                assert (status, raw) == (over_http.status_code, over_http.content) and status == expected, raw
                # answered before its body was read to the end: the server closes rather than reads the rest
                assert (over_http.headers.get("connection") == "close") == (status in (404, 413)), status
    finally:
        runner.policies.remove_job("test_job")


def _runner(url: str, **options: Any) -> TaskAppRunner:
    return TaskAppRunner(url, TASK_APP_KEY, job_id="pl_bound", env_name="banking", env_config={}, policy_config={},
                         max_concurrent=2, budget=RolloutBudget(None), cancelled=threading.Event(), **options)


def test_an_oversized_answer_scores_zero_with_the_same_reason_on_both_transports() -> None:
    huge = b"x" * (MAX_ANSWER_BYTES + 1)

    async def declared(request: Request) -> Response:
        return Response(huge, media_type="application/json")

    async def streamed(request: Request) -> StreamingResponse:
        async def chunks() -> Any:
            for start in range(0, len(huge), 1 << 20):
                yield huge[start:start + (1 << 20)]
        return StreamingResponse(chunks(), media_type="application/json")

    async def in_process(offered: Any, body: bytes) -> tuple[int, bytes]:
        return 200, huge

    app = Starlette(routes=[Route("/declared/rollout", declared, methods=["POST"]),
                            Route("/streamed/rollout", streamed, methods=["POST"])])
    errors = []
    with serve_in_thread(app, name="oversized-task-app") as server:
        for runner in (_runner(server.url + "/declared"), _runner(server.url + "/streamed"),
                       _runner(server.url, in_process=in_process)):
            try:
                (rollout,) = runner.run("http://127.0.0.1:9/v1/policies/p", [0], "train", budgeted=False)
            finally:
                runner.close()
            assert rollout.score == 0.0
            errors.append(rollout.error)
    assert errors == [f"the task app's answer is larger than the {MAX_ANSWER_BYTES}-byte limit"] * 3


def test_a_policy_request_is_a_fresh_copy_on_the_in_process_transport(backend: Backend) -> None:
    """The task app's request reaches the policy as bytes, as over HTTP: the policy cannot change what the app
    keeps (its messages go into the rollout's trace)."""
    runner = backend.app.state.backend.runner
    seen: list[dict[str, Any]] = []

    def mutating(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        request["messages"].clear()
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": "x"}}]}

    policy_id = runner.policies.add("test_copy", mutating)
    try:
        answer = runner.task_apps_in_process(backend.mounted_url, backend.url)
        status, raw = asyncio.run(answer([TASK_APP_KEY], _rollout_body(f"{backend.url}/v1/policies/{policy_id}")))
    finally:
        runner.policies.remove_job("test_copy")
    assert status == 200 and len(seen) == 1
    (step,) = msgspec.json.decode(raw)["trajectories"][0]["steps"]
    assert step["info"]["messages"], "the policy's change reached the task app's copy"
