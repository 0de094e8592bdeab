"""``POST /rl/verify_task_app``: the RL pre-flight check, done by the backend with the task-app key it holds.

``synth-ai train`` asks the backend to probe the task app before it submits an RL job; the answer lists
each key tried (masked) and the status ``/health`` and ``/task_info`` gave with it.
"""

from __future__ import annotations

from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from synth_nb.local.errors import ApiError
from synth_nb.local.lifecycle import mask_secret
from synth_nb.local.server.http import json_body
from synth_nb.local.server.state import state_of
from synth_nb.local.urls import endpoint

__all__ = ["routes"]


async def _probe(client: httpx.AsyncClient, url: str, key: str | None) -> tuple[int | None, str | None]:
    headers = {"X-API-Key": key, "X-API-Keys": key, "Authorization": f"Bearer {key}"} if key else {}
    try:
        response = await client.get(url, headers=headers)
    except httpx.HTTPError as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return response.status_code, None


def _problem(base: str, attempt: dict[str, Any], *, holds_key: bool) -> str:
    """What went wrong, as one sentence a person can act on."""
    if attempt["health_status"] is None:
        return f"the task app at {base} cannot be reached ({attempt['error']}); is it running at that URL?"
    answered = f"/health answered {attempt['health_status']}, /task_info {attempt['task_info_status']}"
    if not holds_key:
        return (f"the task app at {base} did not accept the request ({answered}): this backend holds no "
                "ENVIRONMENT_API_KEY; put the task app's key in ENVIRONMENT_API_KEY (.env, --env-file or the "
                "environment) and submit again")
    if attempt["health_status"] in (400, 401, 403):
        return (f"the task app at {base} refused the ENVIRONMENT_API_KEY this backend holds ({answered}); "
                "put the task app's own key in ENVIRONMENT_API_KEY and submit again")
    return f"the task app at {base} did not answer 200 on /health and /task_info ({answered})"


async def verify_task_app(request: Request) -> Response:
    """Probe ``{endpoint_base_url}/health`` and ``/task_info`` with the task-app key this backend holds (for its
    own example apps, their own key when it holds none)."""
    body = await json_body(request)
    base = body.get("endpoint_base_url")
    if not isinstance(base, str) or not base.startswith(("http://", "https://")):
        raise ApiError(422, "endpoint_base_url must be an http(s) URL")
    base = base.rstrip("/")
    state = state_of(request)
    env_key = state.runner.task_app_key(base)
    keys: list[str | None] = [env_key] if env_key else [None]
    attempts: list[dict[str, Any]] = []
    async with httpx.AsyncClient(timeout=state.probe_timeout, trust_env=False) as client:
        for key in keys:
            health_status, health_error = await _probe(client, endpoint(base, "/health"), key)
            info_status, info_error = await _probe(client, endpoint(base, "/task_info"), key)
            ok = health_status == 200 and info_status == 200
            attempts.append({
                "key_prefix": mask_secret(key) if key else None, "health_status": health_status,
                "task_info_status": info_status, "status": 200 if ok else (health_status or 502),
                "error": health_error or info_error,
            })
    any_ok = any(a["status"] == 200 for a in attempts)
    detail = None if any_ok else _problem(base, attempts[0], holds_key=bool(env_key))
    return JSONResponse({
        "any_ok": any_ok, "endpoint_base_url": base,
        "candidates_first15": [mask_secret(k) for k in keys if k], "attempts": attempts, "detail": detail,
    })


routes = [Route("/rl/verify_task_app", verify_task_app, methods=["POST"])]
