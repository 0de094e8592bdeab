"""The task-app contract both bundled examples follow: six routes, key checks, JSON bodies, policy calls.

Routes: ``GET /`` (open), ``GET /health``, ``GET /info``, ``GET /task_info``, ``POST /rollout`` and
``POST /done``, all but ``/`` behind ``X-API-Key`` / ``X-API-Keys`` / ``Authorization: Bearer`` = the app's
key (ENVIRONMENT_API_KEY). A missing or wrong key is 401; no key configured at all is 503. Errors are JSON
``{"detail": ...}``. The key may also be a function returning the keys accepted right now (the embedded
backend serves the examples with every task-app key it holds). The policy a rollout names (``policy.config.inference_url``, any URL the caller
chooses) gets only the credentials meant for it, ``policy_api_key``, none by default: the app's own key
never leaves it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from synth_nb.local.errors import ApiError, TaskAppRefusal
from synth_nb.local.lifecycle import mask_secret
from synth_nb.local.server.http import limited_stream, parse_json_object

__all__ = ["KeySource", "PolicyClient", "allowed_keys", "as_table", "build_task_app", "normalize_inference_url"]

#: a rollout request is a few kilobytes; anything near this is not one
MAX_ROLLOUT_BYTES = 4 * 1024 * 1024
_POLICY_TIMEOUT = aiohttp.ClientTimeout(total=120.0, connect=10.0)
_JSON = {"Content-Type": "application/json"}

Handler = Callable[[Request], Awaitable[Any]]
RolloutHandler = Callable[[dict[str, Any], "PolicyClient"], Awaitable[dict[str, Any]]]
#: one fixed key, the keys accepted right now, or None for ENVIRONMENT_API_KEY read at request time
KeySource = str | Callable[[], Sequence[str]] | None


def as_table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def normalize_inference_url(url: str) -> str:
    """Task-app rule: keep ``…/chat/completions``; ``…/v1`` or ``…/v1/<id>`` gain ``/chat/completions``."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path = f"{path}/chat/completions" if (path.endswith("/v1") or "/v1/" in path) else f"{path}/v1/chat/completions"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def allowed_keys(fixed: KeySource) -> list[str]:
    """``fixed`` (or what it returns now), else ENVIRONMENT_API_KEY (read now), plus the comma-separated
    ENVIRONMENT_API_KEY_ALIASES."""
    if callable(fixed):
        return [k for k in fixed() if k]
    keys = [fixed or os.environ.get("ENVIRONMENT_API_KEY", "")]
    keys += os.environ.get("ENVIRONMENT_API_KEY_ALIASES", "").split(",")
    return [k.strip() for k in keys if k and k.strip()]


def _check_key(request: Request, fixed: KeySource) -> None:
    allowed = allowed_keys(fixed)
    if not allowed:
        raise TaskAppRefusal(503, {"error": {"code": "missing_environment_api_key",
                                             "message": "ENVIRONMENT_API_KEY is not configured"}})
    offered = [request.headers.get("x-api-key", ""), *request.headers.get("x-api-keys", "").split(",")]
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        offered.append(auth[7:])
    if not any(k.strip() in allowed for k in offered if k.strip()):
        raise TaskAppRefusal(401, {"error": {"code": "unauthorised",
                                             "message": "API key missing or invalid: send X-API-Key"}})


async def _rollout_body(request: Request) -> dict[str, Any]:
    try:
        raw = b"".join([chunk async for chunk in limited_stream(request, MAX_ROLLOUT_BYTES)])
        return parse_json_object(raw)
    except ApiError as exc:
        raise TaskAppRefusal(exc.status_code, exc.detail) from None


class PolicyClient:
    """Calls the policy a rollout names, sending only ``api_key`` (the policy's own credentials, if any).

    aiohttp rather than httpx: every rollout makes one call here, and httpx's async pool costs several
    times the CPU per request. One keep-alive session per event loop, closed when that loop shuts down
    (asyncio cancels the tasks left at shutdown), so a standalone app and one mounted in the backend need
    no lifespan hook. The session ignores proxy and ``.netrc`` settings: nothing but ``api_key`` is sent.
    """

    def __init__(self, api_key: str | None = None) -> None:
        self._headers = {**_JSON, "Authorization": f"Bearer {api_key}"} if api_key else _JSON
        self._sessions: dict[asyncio.AbstractEventLoop, tuple[aiohttp.ClientSession, asyncio.Task[None]]] = {}

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        entry = self._sessions.get(loop)
        if entry is None or entry[0].closed:
            session = aiohttp.ClientSession(timeout=_POLICY_TIMEOUT, connector=aiohttp.TCPConnector(limit=64),
                                            trust_env=False)
            self._sessions[loop] = (session, loop.create_task(self._close_with_loop(loop, session)))
            return session
        return entry[0]

    async def _close_with_loop(self, loop: asyncio.AbstractEventLoop, session: aiohttp.ClientSession) -> None:
        try:
            await loop.create_future()  # never set: cancelled when the loop shuts down
        finally:
            self._sessions.pop(loop, None)
            await session.close()

    async def complete(self, inference_url: str, request: dict[str, Any]) -> dict[str, Any]:
        """The policy's chat completion; ``TaskAppRefusal(502)`` when it cannot be had."""
        try:
            async with self._session().post(normalize_inference_url(inference_url),
                                            data=msgspec.json.encode(request), headers=self._headers) as response:
                status, raw = response.status, await response.read()
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise TaskAppRefusal(502, f"policy call failed: {type(exc).__name__}: {exc}") from None
        if status != 200:
            raise TaskAppRefusal(502, f"policy call failed: HTTP {status}: {raw.decode('utf-8', 'replace')[:300]}")
        try:
            completion = msgspec.json.decode(raw)
        except (msgspec.DecodeError, RecursionError):
            raise TaskAppRefusal(502, "the policy's reply is not JSON") from None
        if not isinstance(completion, dict):
            raise TaskAppRefusal(502, "the policy's reply is not an OpenAI chat completion")
        return completion


def build_task_app(*, app_id: str, api_key: KeySource, info: Handler, task_info: Handler,
                   rollout: RolloutHandler, policy_api_key: str | None = None) -> Starlette:
    """The six routes over an app's own ``info``, ``task_info`` and ``rollout`` handlers.

    ``api_key`` None means "read ENVIRONMENT_API_KEY at request time".
    """
    policy = PolicyClient(policy_api_key)

    def guarded(handler: Handler, *, auth: bool = True) -> Handler:
        async def endpoint(request: Request) -> Response:
            try:
                if auth:
                    _check_key(request, api_key)
                return Response(msgspec.json.encode(await handler(request)), media_type="application/json")
            except TaskAppRefusal as exc:
                return JSONResponse({"detail": exc.detail}, status_code=exc.status)
        return endpoint

    async def root(request: Request) -> dict[str, Any]:
        return {"status": "ok", "service": app_id}

    async def health(request: Request) -> dict[str, Any]:
        return {"healthy": True, "auth": {"required": True, "key": mask_secret((allowed_keys(api_key) or [""])[0])}}

    async def run_rollout(request: Request) -> dict[str, Any]:
        return await rollout(await _rollout_body(request), policy)

    async def done(request: Request) -> dict[str, Any]:
        return {"ok": True, "service": app_id}

    return Starlette(routes=[
        Route("/", guarded(root, auth=False), methods=["GET", "HEAD"]),
        Route("/health", guarded(health), methods=["GET"]),
        Route("/info", guarded(info), methods=["GET"]),
        Route("/task_info", guarded(task_info), methods=["GET"]),
        Route("/rollout", guarded(run_rollout), methods=["POST"]),
        Route("/done", guarded(done), methods=["POST"]),
    ])
