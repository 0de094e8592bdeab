"""The task-app contract both bundled examples follow: six routes, key checks, JSON bodies, policy calls.

Routes: ``GET /`` (open), ``GET /health``, ``GET /info``, ``GET /task_info``, ``POST /rollout`` and
``POST /done``, all but ``/`` behind ``X-API-Key`` / ``X-API-Keys`` / ``Authorization: Bearer`` = the app's
key (ENVIRONMENT_API_KEY). A missing or wrong key is 401; no key configured at all is 503. Errors are JSON
``{"detail": ...}``. The key may also be a function returning the keys accepted right now (the embedded
backend serves the examples with every task-app key it holds). The policy a rollout names (``policy.config.inference_url``, any URL the caller
chooses) gets only the credentials meant for it, ``policy_api_key``, none by default: the app's own key
never leaves it.

``/rollout`` has two transports over one code path (``TaskAppContract.answer_rollout``: key check, body
bounded in size and depth, the app's rollout, its JSON answer or refusal): the HTTP route, and the call
the embedded backend's executors make in its own process to an example it serves itself (no socket, the
same bytes in and out). Likewise a rollout's policy call goes to ``local_policies`` instead of over HTTP
when the policy is one the same process serves (the backend's own policy route, see ``policy_proxy``).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from synth_nb.local.errors import ApiError, TaskAppRefusal
from synth_nb.local.lifecycle import mask_secret
from synth_nb.local.server.http import check_size, parse_json_object, read_body, send_json

__all__ = ["KeySource", "LocalPolicies", "PolicyAnswer", "PolicyClient", "RolloutAnswer", "TaskAppContract",
           "allowed_keys", "as_table", "build_task_app", "normalize_inference_url"]

log = logging.getLogger(__name__)

#: a rollout request is a few kilobytes; anything near this is not one
MAX_ROLLOUT_BYTES = 4 * 1024 * 1024
_POLICY_TIMEOUT = aiohttp.ClientTimeout(total=120.0, connect=10.0)
_JSON = {"Content-Type": "application/json"}

Handler = Callable[[Request], Awaitable[Any]]
RolloutHandler = Callable[[dict[str, Any], "PolicyClient"], Awaitable[dict[str, Any]]]
#: one fixed key, the keys accepted right now, or None for ENVIRONMENT_API_KEY read at request time
KeySource = str | Callable[[], Sequence[str]] | None
#: ``/rollout`` called in this process: (keys offered, request body) -> (HTTP status, JSON answer)
RolloutAnswer = Callable[[Sequence[str], bytes], Awaitable[tuple[int, bytes]]]
#: a policy this process serves itself: (chat request body) -> (HTTP status, JSON answer)
PolicyAnswer = Callable[[bytes], Awaitable[tuple[int, bytes]]]
#: the policy at an inference URL when this process serves it, else None (the call then goes over HTTP)
LocalPolicies = Callable[[str], PolicyAnswer | None]


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


_KEY_HEADERS = frozenset({b"x-api-key", b"x-api-keys", b"authorization"})


def _offered_keys(headers: Mapping[str, str]) -> list[str]:
    """The keys a request offers: ``X-API-Key``, each of ``X-API-Keys``, an ``Authorization: Bearer`` token."""
    offered = [headers.get("x-api-key", ""), *headers.get("x-api-keys", "").split(",")]
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        offered.append(auth[7:])
    return offered


def _check_key(offered: Iterable[str], fixed: KeySource) -> None:
    allowed = allowed_keys(fixed)
    if not allowed:
        raise TaskAppRefusal(503, {"error": {"code": "missing_environment_api_key",
                                             "message": "ENVIRONMENT_API_KEY is not configured"}})
    if not any(k.strip() in allowed for k in offered if k.strip()):
        raise TaskAppRefusal(401, {"error": {"code": "unauthorised",
                                             "message": "API key missing or invalid: send X-API-Key"}})


def _refusal(exc: TaskAppRefusal) -> tuple[int, bytes]:
    return exc.status, msgspec.json.encode({"detail": exc.detail})


class PolicyClient:
    """Calls the policy a rollout names, sending only ``api_key`` (the policy's own credentials, if any).

    A policy ``local_policies`` knows (one this process serves itself) is called in-process with the same
    request bytes and its answer read the same way; it needs no credentials, so none are handed to it.

    aiohttp rather than httpx: every rollout makes one call here, and httpx's async pool costs several
    times the CPU per request. One keep-alive session per event loop, closed when that loop shuts down
    (asyncio cancels the tasks left at shutdown), so a standalone app and one mounted in the backend need
    no lifespan hook. The session ignores proxy and ``.netrc`` settings: nothing but ``api_key`` is sent.
    """

    def __init__(self, api_key: str | None = None, local_policies: LocalPolicies | None = None) -> None:
        self._headers = {**_JSON, "Authorization": f"Bearer {api_key}"} if api_key else _JSON
        self._local = local_policies
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
        url, data = normalize_inference_url(inference_url), msgspec.json.encode(request)
        answer = self._local(url) if self._local is not None else None
        try:
            if answer is not None:
                async with asyncio.timeout(_POLICY_TIMEOUT.total):
                    status, raw = await answer(data)
            else:
                async with self._session().post(url, data=data, headers=self._headers) as response:
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


class TaskAppContract:
    """The contract's checks around an app's handlers, whatever carries the request (see the module doc)."""

    def __init__(self, *, app_id: str, api_key: KeySource, rollout: RolloutHandler, policy: PolicyClient) -> None:
        self.app_id = app_id
        self.api_key = api_key
        self._rollout = rollout
        self._policy = policy

    def check_key(self, offered: Iterable[str]) -> None:
        """``TaskAppRefusal`` 401 unless one of ``offered`` is a key accepted now (503 when none is set)."""
        _check_key(offered, self.api_key)

    async def answer_rollout(self, offered: Sequence[str], read_body: Callable[[], Awaitable[bytes]]
                             ) -> tuple[int, bytes]:
        """``POST /rollout``: the key checked before the body is read (``read_body`` holds it to
        ``MAX_ROLLOUT_BYTES``), the body parsed as a JSON object no deeper than the server's limit, the app's
        rollout and its answer as JSON; a refusal is its status with ``{"detail": ...}``, a fault in the app
        a logged 500."""
        try:
            self.check_key(offered)
            try:
                body = parse_json_object(await read_body())
            except ApiError as exc:
                raise TaskAppRefusal(exc.status_code, exc.detail) from None
            return 200, msgspec.json.encode(await self._rollout(body, self._policy))
        except TaskAppRefusal as exc:
            return _refusal(exc)
        except Exception as exc:  # the app's own fault: the caller gets a 500, as from any server
            log.exception("task app %s failed a rollout", self.app_id)
            return 500, msgspec.json.encode({"detail": f"internal error: {type(exc).__name__}"})

    async def rollout_in_process(self, offered: Sequence[str], body: bytes) -> tuple[int, bytes]:
        """``answer_rollout`` for a body handed over in this process (``RolloutAnswer``), held to the same
        size bound as one read from a socket."""
        async def read() -> bytes:
            check_size(len(body), MAX_ROLLOUT_BYTES)
            return body
        return await self.answer_rollout(offered, read)


def _route_path(scope: Scope) -> str:
    """The path below the app's mount point (``/rollout`` of ``/task-apps/banking/rollout``)."""
    path, root = scope["path"], scope.get("root_path", "")
    return path[len(root):] if root and path.startswith(root) else path


class RolloutRoute:
    """``POST /rollout`` over HTTP as plain ASGI (one request per rollout: Starlette's request object costs more
    than the contract's own checks): the keys the headers offer and the streamed body go to
    ``TaskAppContract.answer_rollout``, as on every transport; a body refused before it was read to its end
    closes the connection."""

    def __init__(self, contract: TaskAppContract) -> None:
        self.contract = contract

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            if name in _KEY_HEADERS:  # the first of each, as ``Request.headers.get`` reads it
                headers.setdefault(name.decode("latin-1"), value.decode("latin-1"))
        read_whole = False

        async def read() -> bytes:
            nonlocal read_whole
            body = await read_body(receive, scope, MAX_ROLLOUT_BYTES)
            read_whole = True
            return body

        status, body = await self.contract.answer_rollout(_offered_keys(headers), read)
        await send_json(send, status, body, close=not read_whole)


class TaskAppServer(Starlette):
    """Starlette, with ``POST /rollout`` handed to its ``RolloutRoute`` before the middleware stack and router;
    the app's ``TaskAppContract`` is ``state.contract`` (for the in-process transport)."""

    def __init__(self, contract: TaskAppContract, rollout: RolloutRoute, **options: Any) -> None:
        super().__init__(**options)
        self.state.contract = contract
        self._rollout = rollout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and _route_path(scope) == "/rollout":
            await self._rollout(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


def build_task_app(*, app_id: str, api_key: KeySource, info: Handler, task_info: Handler,
                   rollout: RolloutHandler, policy_api_key: str | None = None,
                   local_policies: LocalPolicies | None = None) -> Starlette:
    """The six routes over an app's own ``info``, ``task_info`` and ``rollout`` handlers; the app's
    ``TaskAppContract`` is ``app.state.contract``.

    ``api_key`` None means "read ENVIRONMENT_API_KEY at request time"; ``local_policies`` names the policies
    this process serves itself (called without HTTP).
    """
    contract = TaskAppContract(app_id=app_id, api_key=api_key, rollout=rollout,
                               policy=PolicyClient(policy_api_key, local_policies))

    def guarded(handler: Handler, *, auth: bool = True) -> Handler:
        async def endpoint(request: Request) -> Response:
            try:
                if auth:
                    contract.check_key(_offered_keys(request.headers))
                return Response(msgspec.json.encode(await handler(request)), media_type="application/json")
            except TaskAppRefusal as exc:
                status, body = _refusal(exc)
                return Response(body, status_code=status, media_type="application/json")
        return endpoint

    async def root(request: Request) -> dict[str, Any]:
        return {"status": "ok", "service": app_id}

    async def health(request: Request) -> dict[str, Any]:
        return {"healthy": True, "auth": {"required": True, "key": mask_secret((allowed_keys(api_key) or [""])[0])}}

    async def done(request: Request) -> dict[str, Any]:
        return {"ok": True, "service": app_id}

    rollout_route = RolloutRoute(contract)
    return TaskAppServer(contract, rollout_route, routes=[
        Route("/", guarded(root, auth=False), methods=["GET", "HEAD"]),
        Route("/health", guarded(health), methods=["GET"]),
        Route("/info", guarded(info), methods=["GET"]),
        Route("/task_info", guarded(task_info), methods=["GET"]),
        Route("/rollout", rollout_route, methods=["POST"]),  # other methods: 405
        Route("/done", guarded(done), methods=["POST"]),
    ])
