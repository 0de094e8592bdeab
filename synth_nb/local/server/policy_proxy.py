"""``POST /v1/policies/{policy_id}[/v1]/chat/completions``: the policies running jobs serve to task apps.

A job registers a handler (``JobContext.serve_policy``) and hands its URL to the task app as
``inference_url``; the id is unguessable and the route disappears with the job, so it needs no API key.

Every rollout calls this route once, so it is plain ASGI (``serve``, called before Starlette's router and
middleware) with msgspec JSON: the routing, request and response objects cost more than the policy's own
work, and a handler's ``answer_now`` (cached embeddings, say) is called on the event loop, saving two
thread switches per call. Other paths under ``/v1/policies/`` fall through to the app (its usual JSON 404/405).
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from synth_nb.local.errors import ApiError
from synth_nb.local.server.http import parse_json_object
from synth_nb.local.server.state import BackendState

__all__ = ["PREFIX", "serve"]

PREFIX = "/v1/policies/"
_SUFFIXES = ("/v1/chat/completions", "/chat/completions")
_JSON_HEADERS = [(b"content-type", b"application/json")]


def _policy_id(path: str) -> str | None:
    """The id in a chat-completions path (one path segment), else None."""
    rest = path[len(PREFIX):]
    for suffix in _SUFFIXES:
        if rest.endswith(suffix):
            policy_id = rest[:-len(suffix)]
            return policy_id if policy_id and "/" not in policy_id else None
    return None


async def _send_json(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [*_JSON_HEADERS, (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive, scope: Scope, max_bytes: int) -> bytes:
    """The request body; ``ApiError(413)`` as soon as it passes ``max_bytes`` (declared or received)."""
    for name, value in scope.get("headers", []):
        if name == b"content-length" and value.isdigit() and int(value) > max_bytes:
            raise ApiError(413, f"request body is larger than the {max_bytes}-byte limit of this backend")
    chunks, received, more = [], 0, True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ApiError(400, "the client went away before sending its body")
        chunk = message.get("body", b"")
        received += len(chunk)
        if received > max_bytes:
            raise ApiError(413, f"request body is larger than the {max_bytes}-byte limit of this backend")
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


async def _answer(state: BackendState, policy_id: str, receive: Receive, scope: Scope) -> tuple[int, Any]:
    handler = state.runner.policies.get(policy_id)
    if handler is None:
        raise ApiError(404, "no running job serves this policy (the job may have finished)")
    payload = parse_json_object(await _read_body(receive, scope, state.max_json_bytes))
    answer_now = getattr(handler, "answer_now", None)  # a policy that can answer without blocking
    try:
        result = answer_now(payload) if answer_now is not None else None
        return 200, result if result is not None else await run_in_threadpool(handler, payload)
    except (ValueError, KeyError, TypeError) as exc:
        raise ApiError(400, f"policy rejected the request: {exc}") from None
    except Exception as exc:  # the policy belongs to an executor; report, don't crash
        return 502, {"detail": f"policy failed: {type(exc).__name__}: {exc}"}


async def serve(state: BackendState, scope: Scope, receive: Receive, send: Send) -> bool:
    """Answer a policy call; False (nothing sent) when ``scope`` is not one, for the app to answer."""
    policy_id = _policy_id(scope.get("path", ""))
    if policy_id is None or scope.get("method") != "POST":
        return False
    try:
        status, result = await _answer(state, policy_id, receive, scope)
    except ApiError as exc:
        status, result = exc.status_code, {"detail": exc.detail}
    try:
        body = msgspec.json.encode(result)
    except (TypeError, ValueError, OverflowError) as exc:
        status, body = 502, msgspec.json.encode({"detail": f"policy returned a non-JSON response: {exc}"})
    await _send_json(send, status, body)
    return True
