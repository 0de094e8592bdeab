"""``POST /v1/policies/{policy_id}[/v1]/chat/completions``: the policies running jobs serve to task apps.

A job registers a handler (``JobContext.serve_policy``) and hands its URL to the task app as
``inference_url``; the id is unguessable and the route disappears with the job, so it needs no API key.
"""

from __future__ import annotations

import json

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from synth_nb.local.errors import ApiError
from synth_nb.local.server.http import json_body
from synth_nb.local.server.state import state_of

__all__ = ["routes"]


async def policy_chat(request: Request) -> Response:
    """Call the handler a job registered for this policy id."""
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


routes = [
    Route("/v1/policies/{policy_id}/chat/completions", policy_chat, methods=["POST"]),
    Route("/v1/policies/{policy_id}/v1/chat/completions", policy_chat, methods=["POST"]),
]
