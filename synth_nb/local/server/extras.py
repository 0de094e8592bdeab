"""Health, RL task-app verification (R0), orchestration fallbacks (O1/O2) and the policy interceptor."""

from __future__ import annotations

import json
from typing import Any

import httpx
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from synth_nb.local.lifecycle import mask_secret, utc_now
from synth_nb.local.server.http import ApiError, json_body
from synth_nb.local.server.state import state_of

__all__ = ["api_routes", "policy_routes"]


async def health(request: Request) -> Response:
    return JSONResponse({"status": "ok", "healthy": True, "service": "synth-nb-local-backend", "time": utc_now()})


async def _probe(client: httpx.AsyncClient, url: str, key: str | None) -> tuple[int | None, str | None]:
    headers = {"X-API-Key": key, "X-API-Keys": key, "Authorization": f"Bearer {key}"} if key else {}
    try:
        response = await client.get(url, headers=headers)
    except httpx.HTTPError as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return response.status_code, None


async def verify_task_app(request: Request) -> Response:
    """Probe ``{endpoint_base_url}/health`` and ``/task_info`` with the task-app key(s) this backend holds."""
    body = await json_body(request)
    base = body.get("endpoint_base_url")
    if not isinstance(base, str) or not base.startswith(("http://", "https://")):
        raise ApiError(422, "endpoint_base_url must be an http(s) URL")
    base = base.rstrip("/")
    state = state_of(request)
    keys: list[str | None] = [state.runner.environment_api_key] if state.runner.environment_api_key else [None]
    attempts: list[dict[str, Any]] = []
    async with httpx.AsyncClient(timeout=state.probe_timeout, trust_env=False) as client:
        for key in keys:
            health_status, health_error = await _probe(client, base + "/health", key)
            info_status, info_error = await _probe(client, base + "/task_info", key)
            ok = health_status == 200 and info_status == 200
            attempts.append({
                "key_prefix": mask_secret(key) if key else None, "health_status": health_status,
                "task_info_status": info_status, "status": 200 if ok else (health_status or 502),
                "error": health_error or info_error,
            })
    any_ok = any(a["status"] == 200 for a in attempts)
    detail = None if any_ok else (
        "the task app did not answer 200 on /health and /task_info"
        + ("" if state.runner.environment_api_key else
           "; this backend holds no ENVIRONMENT_API_KEY (set it in its environment or pass environment_api_key)"))
    return JSONResponse({
        "any_ok": any_ok, "endpoint_base_url": base,
        "candidates_first15": [mask_secret(k) for k in keys if k], "attempts": attempts, "detail": detail,
    })


async def orchestration(request: Request) -> Response:
    raise ApiError(404, "orchestration jobs do not exist on the local backend; use the flow's own job routes")


async def policy_chat(request: Request) -> Response:
    """``POST /v1/policies/{policy_id}[/v1]/chat/completions``: call the handler a job registered."""
    handler = state_of(request).runner.policies.get(request.path_params["policy_id"])
    if handler is None:
        raise ApiError(404, "no running job serves this policy (the job may have finished)")
    payload = await json_body(request)
    try:
        result = await run_in_threadpool(handler, payload)
    except (ValueError, KeyError, TypeError) as exc:
        raise ApiError(400, f"policy rejected the request: {exc}") from None
    except Exception as exc:  # the policy belongs to an executor; report, don't crash
        return JSONResponse({"detail": f"policy failed: {type(exc).__name__}: {exc}"}, status_code=502)
    try:
        return Response(json.dumps(result), media_type="application/json")
    except (TypeError, ValueError) as exc:
        return JSONResponse({"detail": f"policy returned a non-JSON response: {exc}"}, status_code=502)


api_routes = [
    Route("/health", health, methods=["GET"]),
    Route("/rl/verify_task_app", verify_task_app, methods=["POST"]),
    Route("/orchestration/jobs/{job_id}", orchestration, methods=["GET"]),
    Route("/orchestration/jobs/{job_id}/events", orchestration, methods=["GET"]),
]

policy_routes = [
    Route("/v1/policies/{policy_id}/chat/completions", policy_chat, methods=["POST"]),
    Route("/v1/policies/{policy_id}/v1/chat/completions", policy_chat, methods=["POST"]),
]
