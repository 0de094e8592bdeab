"""Both bundled task apps: 401 for a missing or wrong key, and the policy never receives the app's own key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from synth_nb.local.examples import start_task_app
from synth_nb.local.examples._serve import ServerHandle, serve_in_thread

KEY = "sk_env_contract_canary_31c7a9"
POLICY_KEY = "sk_policy_contract_key_8b20"


class CapturingPolicy:
    """An OpenAI-compatible policy that records the headers of every call."""

    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []

        async def chat(request: Request) -> JSONResponse:
            self.headers.append(dict(request.headers))
            tool = (await request.json()).get("tools")
            message: dict[str, Any] = {"role": "assistant", "content": "12345678"}
            if tool:
                name = tool[0]["function"]["name"]
                message = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                           "function": {"name": name, "arguments": json.dumps({"intent": "card_swallowed"})}}]}
            return JSONResponse({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})

        app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
        self.server: ServerHandle = serve_in_thread(app, name="capturing-policy")


@pytest.fixture(scope="module")
def policy() -> Iterator[CapturingPolicy]:
    captured = CapturingPolicy()
    yield captured
    captured.server.stop()


def _rollout(policy_url: str) -> dict[str, Any]:
    return {"run_id": "r1", "mode": "eval", "ops": ["agent", "env"], "env": {"seed": 1, "config": {"split": "train"}},
            "policy": {"config": {"inference_url": f"{policy_url}/v1?cid=c1", "trace_correlation_id": "c1"}}}


@pytest.mark.parametrize("name", ["banking", "charclass"])
def test_a_missing_or_wrong_key_is_401(name: str) -> None:
    with start_task_app(name, api_key=KEY) as app:
        for headers in ({}, {"X-API-Key": "wrong"}, {"Authorization": "Bearer wrong"}, {"X-API-Keys": "a,b"}):
            for method, path in (("GET", "/health"), ("GET", "/task_info"), ("POST", "/rollout")):
                response = httpx.request(method, app.url + path, headers=headers, json={}, trust_env=False)
                assert response.status_code == 401, (path, headers, response.text)
                assert KEY not in response.text and "API key" in response.text
        assert httpx.get(app.url + "/health", headers={"X-API-Key": KEY}, trust_env=False).status_code == 200


@pytest.mark.parametrize("name", ["banking", "charclass"])
def test_the_policy_gets_no_credentials_by_default(name: str, policy: CapturingPolicy) -> None:
    policy.headers.clear()
    with start_task_app(name, api_key=KEY) as app:
        response = httpx.post(app.url + "/rollout", json=_rollout(policy.server.url), trust_env=False,
                              headers={"X-API-Key": KEY, "Authorization": f"Bearer {KEY}", "X-API-Keys": KEY})
    assert response.status_code == 200, response.text
    (seen,) = policy.headers
    assert KEY not in json.dumps(seen)
    assert not {"authorization", "x-api-key", "x-api-keys"} & set(seen)


@pytest.mark.parametrize("name", ["banking", "charclass"])
def test_the_policy_gets_only_its_own_key_when_one_is_given(name: str, policy: CapturingPolicy) -> None:
    policy.headers.clear()
    with start_task_app(name, api_key=KEY, policy_api_key=POLICY_KEY) as app:
        response = httpx.post(app.url + "/rollout", json=_rollout(policy.server.url), headers={"X-API-Key": KEY},
                              trust_env=False)
    assert response.status_code == 200, response.text
    (seen,) = policy.headers
    assert seen["authorization"] == f"Bearer {POLICY_KEY}" and KEY not in json.dumps(seen)


@pytest.mark.parametrize("name", ["banking", "charclass"])
def test_malformed_rollout_bodies_are_4xx_not_500(name: str) -> None:
    with start_task_app(name, api_key=KEY) as app:
        for content, status in ((b"{nope", 400), (b"[1]", 422), (b"[" * 5000 + b"]" * 5000, 400)):
            response = httpx.post(app.url + "/rollout", content=content, headers={"X-API-Key": KEY},
                                  trust_env=False)
            assert response.status_code == status, response.text
