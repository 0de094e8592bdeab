"""``POST /v1/policies/{policy_id}[/v1]/chat/completions``: the policies running jobs serve to task apps.

A job registers a handler (``JobContext.serve_policy``) and hands its URL to the task app as
``inference_url``; the id is unguessable and the route disappears with the job, so it needs no API key.

Every rollout calls this route once, so it is plain ASGI (``serve``, called before Starlette's middleware
stack and router) with msgspec JSON: the routing, request and response objects cost more than the policy's own
work, and a handler's ``answer_now`` (cached embeddings, say) is called on the event loop, saving two
thread switches per call. Other paths under ``/v1/policies/`` fall through to the app (its usual JSON 404/405).

A task app of the same process (a bundled example the backend serves) reaches the route through
``in_process``: the same ``respond`` (the same lookup, size and depth bounds, errors and JSON bytes), without
the loopback round trip. Only a URL on exactly the backend's own address is treated so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from synth_nb.local.errors import ApiError
from synth_nb.local.server.http import check_size, parse_json_object, read_body, send_json
from synth_nb.local.server.state import BackendState

if TYPE_CHECKING:  # types only: the contract module imports aiohttp, which serving this route does not need
    from synth_nb.local.examples.contract import LocalPolicies, PolicyAnswer

__all__ = ["PREFIX", "in_process", "respond", "serve"]

PREFIX = "/v1/policies/"
_SUFFIXES = ("/v1/chat/completions", "/chat/completions")


def _policy_id(path: str) -> str | None:
    """The id in a chat-completions path (one path segment), else None."""
    rest = path[len(PREFIX):]
    for suffix in _SUFFIXES:
        if rest.endswith(suffix):
            policy_id = rest[:-len(suffix)]
            return policy_id if policy_id and "/" not in policy_id else None
    return None


async def _answer(state: BackendState, policy_id: str, read_body: Callable[[], Awaitable[bytes]]) -> tuple[int, Any]:
    handler = state.runner.policies.get(policy_id)
    if handler is None:
        raise ApiError(404, "no running job serves this policy (the job may have finished)")
    payload = parse_json_object(await read_body())
    answer_now = getattr(handler, "answer_now", None)  # a policy that can answer without blocking
    try:
        result = answer_now(payload) if answer_now is not None else None
        return 200, result if result is not None else await run_in_threadpool(handler, payload)
    except (ValueError, KeyError, TypeError) as exc:
        raise ApiError(400, f"policy rejected the request: {exc}") from None
    except Exception as exc:  # the policy belongs to an executor; report, don't crash
        return 502, {"detail": f"policy failed: {type(exc).__name__}: {exc}"}


async def respond(state: BackendState, policy_id: str, read_body: Callable[[], Awaitable[bytes]]) -> tuple[int, bytes]:
    """The answer to a call of policy ``policy_id`` whose body ``read_body`` reads (under the size bound):
    its status and JSON bytes, the same whichever transport carried it."""
    try:
        status, result = await _answer(state, policy_id, read_body)
    except ApiError as exc:
        status, result = exc.status_code, {"detail": exc.detail}
    try:
        return status, msgspec.json.encode(result)
    except (TypeError, ValueError, OverflowError) as exc:
        return 502, msgspec.json.encode({"detail": f"policy returned a non-JSON response: {exc}"})


async def serve(state: BackendState, scope: Scope, receive: Receive, send: Send) -> bool:
    """Answer a policy call; False (nothing sent) when ``scope`` is not one, for the app to answer."""
    policy_id = _policy_id(scope.get("path", ""))
    if policy_id is None or scope.get("method") != "POST":
        return False
    read_whole = False

    async def read() -> bytes:
        nonlocal read_whole
        body = await read_body(receive, scope, state.max_json_bytes)
        read_whole = True
        return body

    status, body = await respond(state, policy_id, read)
    # answered before its body was read to the end (an unknown policy, a body over the limit): the connection
    # is closed rather than the rest of the body read and thrown away
    await send_json(send, status, body, close=not read_whole)
    return True


def in_process(state: BackendState) -> LocalPolicies:
    """For a task app in this process (``examples.contract.LocalPolicies``): the policy route an inference URL
    names when it is this backend's own (``http://`` on exactly the address it listens on, a chat-completions
    path with a plain id), as a call of ``respond``; None for any other URL, which is called over HTTP."""
    def local(url: str) -> PolicyAnswer | None:
        ours = state.runner.base_url
        parts = urlsplit(url)
        if not ours or parts.scheme != "http" or "%" in parts.path or f"http://{parts.netloc}" != ours:
            return None
        policy_id = _policy_id(parts.path) if parts.path.startswith(PREFIX) else None
        if policy_id is None:
            return None

        async def answer(body: bytes) -> tuple[int, bytes]:
            async def read() -> bytes:
                check_size(len(body), state.max_json_bytes)
                return body
            return await respond(state, policy_id, read)
        return answer
    return local
