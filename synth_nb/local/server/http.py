"""Reading requests safely: every bad input becomes an ``ApiError`` (4xx JSON ``{"detail": ...}``).

Bodies are read as a stream and refused with 413 as soon as they pass their limit, whatever the client
declared, so a huge (or chunked) body never sits whole in memory or on disk; ``CloseUnreadBodies`` then
closes the connection, so the server does not go on reading the rest. JSON nested deeper than
``MAX_JSON_DEPTH`` is refused with 400 before anything walks it recursively. Bodies are parsed with
msgspec (strict JSON: no NaN/Infinity), several times faster than ``json`` on the rollout path's small bodies.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from synth_nb.local.errors import ApiError

__all__ = ["MAX_JSON_DEPTH", "CloseUnreadBodies", "check_size", "error_response", "int_param", "json_body",
           "limited_stream", "parse_json_object", "read_body", "send_json"]

_JSON_HEADERS = [(b"content-type", b"application/json")]

#: far deeper than any config the flows send (about 8), far shallower than Python's recursion limit
MAX_JSON_DEPTH = 64


def error_response(status_code: int, detail: Any, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status_code, headers=headers)


def check_size(size: int, max_bytes: int, *, what: str = "request body") -> None:
    """``ApiError(413)`` when ``size`` bytes pass ``max_bytes``: the bound a body read from a socket and one
    handed over in this process (``examples.contract``, ``policy_proxy``) are both held to."""
    if size > max_bytes:
        raise ApiError(413, f"{what} is larger than the {max_bytes}-byte limit of this backend")


async def limited_stream(request: Request, max_bytes: int, *, what: str = "request body"
                         ) -> AsyncGenerator[bytes, None]:
    """The body's chunks; raises ``ApiError(413)`` once more than ``max_bytes`` arrived (or were declared)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit():
        check_size(int(declared), max_bytes, what=what)
    received = 0
    async for chunk in request.stream():
        received += len(chunk)
        check_size(received, max_bytes, what=what)
        yield chunk


async def read_body(receive: Receive, scope: Scope, max_bytes: int) -> bytes:
    """A plain-ASGI route's request body (the hot routes skip Starlette's ``Request``); ``ApiError(413)`` as
    soon as it passes ``max_bytes`` (declared or received)."""
    for name, value in scope.get("headers", []):
        if name == b"content-length" and value.isdigit():
            check_size(int(value), max_bytes)
    chunks, received, more = [], 0, True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ApiError(400, "the client went away before sending its body")
        chunk = message.get("body", b"")
        received += len(chunk)
        check_size(received, max_bytes)
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


async def send_json(send: Send, status: int, body: bytes, *, close: bool) -> None:
    """A plain-ASGI route's JSON answer; ``close`` (when the request body was not read to its end) says
    ``Connection: close``, so the server does not go on reading the rest."""
    headers = [*_JSON_HEADERS, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"connection", b"close")] if close else headers})
    await send({"type": "http.response.body", "body": body})


def _depth_exceeds(value: Any, limit: int) -> bool:
    """True when ``value`` nests lists/objects more than ``limit`` levels deep (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


def parse_json_object(raw: bytes, *, allow_empty: bool = False) -> dict[str, Any]:
    """``raw`` as a JSON object; 400 for malformed or too deeply nested JSON, 422 for a non-object."""
    if not raw.strip():
        if allow_empty:
            return {}
        raise ApiError(400, "request body is empty; send a JSON object")
    try:
        body = msgspec.json.decode(raw)
    except RecursionError:
        raise ApiError(400, f"request body is nested too deeply (more than {MAX_JSON_DEPTH} levels)") from None
    except (msgspec.DecodeError, ValueError) as exc:
        raise ApiError(400, f"request body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(422, f"request body must be a JSON object, got {type(body).__name__}")
    # fewer brackets than the limit cannot nest deeper than it (most bodies): no walk needed
    if raw.count(b"{") + raw.count(b"[") > MAX_JSON_DEPTH and _depth_exceeds(body, MAX_JSON_DEPTH):
        raise ApiError(400, f"request body is nested too deeply (more than {MAX_JSON_DEPTH} levels)")
    return body


async def json_body(request: Request, *, max_bytes: int | None = None, allow_empty: bool = False) -> dict[str, Any]:
    """The request's JSON object body, read under ``max_bytes`` (default: the server's ``max_json_bytes``)."""
    limit = max_bytes if max_bytes is not None else request.app.state.backend.max_json_bytes
    chunks = [chunk async for chunk in limited_stream(request, limit)]
    return parse_json_object(b"".join(chunks), allow_empty=allow_empty)


def int_param(request: Request, name: str, default: int | None, *, minimum: int | None = None,
              maximum: int | None = None) -> int | None:
    """An integer query parameter (422 if not an integer); clamped to ``maximum``."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(422, f"query parameter {name!r} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ApiError(422, f"query parameter {name!r} must be >= {minimum}, got {value}")
    if maximum is not None:
        value = min(value, maximum)
    return value


def _has_body(scope: Scope) -> bool:
    headers = dict(scope.get("headers") or [])
    return b"transfer-encoding" in headers or headers.get(b"content-length", b"0").strip() not in (b"", b"0")


class CloseUnreadBodies:
    """Pure ASGI middleware: a response started before the request body was read to its end (a 413, a 401)
    says ``Connection: close``, so the server closes the connection instead of reading and discarding the
    rest of the body, however large it is."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _has_body(scope):
            await self.app(scope, receive, send)
            return
        read_whole = False

        async def receive_tracked() -> Message:
            nonlocal read_whole
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                read_whole = True
            return message

        async def send_tracked(message: Message) -> None:
            if message["type"] == "http.response.start" and not read_whole:
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await self.app(scope, receive_tracked, send_tracked)
