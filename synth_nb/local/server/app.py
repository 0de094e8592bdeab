"""The local backend's ASGI app: the Synth backend contract on ``/api`` (and ``/api/v1`` for status tools).

Every ``/api`` route needs ``Authorization: Bearer <key>`` (or ``X-API-Key``); errors are always JSON
``{"detail": ...}``. ``/v1/policies/…`` (policies served by running jobs for their task apps) needs no key;
``/task-apps/<name>`` (the bundled example task apps) check task-app keys of their own.
The data dir holds no secret: job bodies are stored with their keys masked (see ``redact``).
"""

from __future__ import annotations

import errno
import hmac
import logging
import os
import secrets
import sqlite3
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount
from starlette.types import ASGIApp, Receive, Scope, Send

from synth_nb.local.errors import ApiError
from synth_nb.local.examples.banking.app import seed_policy_requests
from synth_nb.local.examples.mounted import MountedExamples
from synth_nb.local.held_keys import HeldKeys
from synth_nb.local.policies import warm_up
from synth_nb.local.runner import JobRunner
from synth_nb.local.server import (
    backend_status,
    dry_rollout,
    env_keys,
    files,
    health,
    jobs,
    policy_proxy,
    task_app_check,
)
from synth_nb.local.server.http import CloseUnreadBodies, error_response
from synth_nb.local.server.state import BackendState, state_of
from synth_nb.local.server.streaming import JobSignals
from synth_nb.local.storage import Storage

__all__ = ["close_app", "create_app", "generate_task_app_key"]

log = logging.getLogger(__name__)


class BackendApp(Starlette):
    """Starlette, with policy calls (one per rollout of a task app in another process) answered before its
    middleware stack and router (``policy_proxy.serve``, which closes a connection whose body it left unread
    as ``CloseUnreadBodies`` does for the other routes)."""

    backend: BackendState

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] == "http" and scope["path"].startswith(policy_proxy.PREFIX)
                and await policy_proxy.serve(self.backend, scope, receive, send)):
            return
        await super().__call__(scope, receive, send)


class BearerAuth:
    """Pure ASGI middleware (streams pass through untouched): 401 JSON for a missing or wrong key."""

    def __init__(self, app: ASGIApp, api_key: str, state: BackendState) -> None:
        self.app = app
        self._key = api_key.encode()
        self._state = state

    def _authorised(self, scope: Scope) -> bool:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        auth = headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        candidates = [token.strip()] if scheme.lower() == "bearer" else []
        if headers.get("x-api-key"):
            candidates.append(headers["x-api-key"].strip())
        return any(hmac.compare_digest(c.encode(), self._key) for c in candidates)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if not self._state.runner.base_url and scope.get("server"):
                host, port = scope["server"]
                self._state.runner.base_url = f"http://{host}:{port}"
            path = scope.get("path", "")
            if (path == "/api" or path.startswith("/api/")) and not self._authorised(scope):
                response = error_response(
                    401, "missing or invalid API key: send 'Authorization: Bearer <key>' with this backend's key",
                    headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc.status_code, exc.detail, exc.headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, exc.detail, dict(exc.headers or {}))


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _storage_problem(exc: BaseException, data_dir: Path) -> tuple[int, str] | None:
    """507 for a full disk, 503 for a read-only data folder (what the user must fix), else None."""
    for cause in _causes(exc):
        code = getattr(cause, "sqlite_errorcode", None)
        text = str(cause)
        if (isinstance(cause, OSError) and cause.errno == errno.ENOSPC) or code == sqlite3.SQLITE_FULL or (
                isinstance(cause, sqlite3.OperationalError) and "disk is full" in text):
            return 507, (f"no space left on {data_dir}: nothing was stored; free some space there (or move the "
                         "data folder) and send it again")
        if (isinstance(cause, OSError) and cause.errno == errno.EROFS) or code == sqlite3.SQLITE_READONLY or (
                isinstance(cause, sqlite3.OperationalError) and "readonly database" in text):
            return 503, f"the data folder {data_dir} is read-only: nothing was stored; make it writable"
    return None


async def _unexpected(request: Request, exc: Exception) -> Response:
    problem = _storage_problem(exc, state_of(request).storage.data_dir)
    if problem is not None:
        log.error("%s %s: %s", request.method, request.url.path, problem[1])
        return error_response(*problem)
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return JSONResponse({"detail": f"internal error: {type(exc).__name__}"}, status_code=500)


def _executor_options(given: dict[str, dict[str, Any]] | None, data_dir: Path,
                      recordings_dir: str | Path | None) -> dict[str, dict[str, Any]]:
    """``given`` plus the replay executor's one folder of recordings (default ``<data_dir>/recordings``)."""
    options = {name: dict(values) for name, values in (given or {}).items()}
    folder = Path(recordings_dir) if recordings_dir is not None else data_dir / "recordings"
    options.setdefault("replay", {}).setdefault("recordings_dir", str(folder.expanduser().resolve()))
    return options


def generate_task_app_key() -> str:
    return f"sk_env_local_{secrets.token_hex(16)}"


def create_app(data_dir: str | Path, api_key: str, *, default_executor: str | None = None,
               environment_api_key: str | None = None, task_app_key: str | None = None,
               max_upload_bytes: int = 200 * 1024 * 1024, max_json_bytes: int = 16 * 1024 * 1024, keepalive_seconds: float = 15.0,
               cancel_grace_seconds: float = 30.0, probe_timeout: float = 10.0,
               recordings_dir: str | Path | None = None,
               executor_options: dict[str, dict[str, Any]] | None = None) -> Starlette:
    """Build the app over ``data_dir`` (created if needed).

    Jobs that were running when a previous server on this folder stopped are marked failed here.
    ``environment_api_key`` (default: env ``ENVIRONMENT_API_KEY``) is the task-app key used to verify task
    apps and by RL, until a client hands over another (``POST /api/v1/env-keys``). The bundled example task
    apps are served at ``/task-apps/<name>`` and accept ``task_app_key`` (default: a new one) and every
    environment key the backend holds; while it holds none, jobs and probes of those apps on its own URL are
    sent ``task_app_key`` (``own_task_apps``). ``default_executor`` runs every job that names none (``"replay"``
    makes any client's jobs replay); ``executor_options[name]`` reaches that executor as ``ctx.options`` (e.g.
    ``{"replay": {"speed": 10}}``). Replays may read the bundled recordings and files in ``recordings_dir``
    (default ``<data_dir>/recordings``) only. Bodies over ``max_upload_bytes`` (uploads) or
    ``max_json_bytes`` (JSON) are refused with 413 while they stream in.
    """
    if not api_key:
        raise ValueError("api_key must be a non-empty string")
    signals = JobSignals()
    folder = Path(data_dir)
    storage = Storage(folder, on_change=signals.notify)
    interrupted = storage.fail_interrupted()
    if interrupted:
        log.warning("marked %d interrupted job(s) as failed: %s", len(interrupted), ", ".join(interrupted))
    env_key = environment_api_key if environment_api_key is not None else os.environ.get("ENVIRONMENT_API_KEY")
    held = HeldKeys(task_app_key or generate_task_app_key(), env_key or None)
    runner = JobRunner(storage, environment_api_key=env_key or None, cancel_grace_seconds=cancel_grace_seconds,
                       executor_options=_executor_options(executor_options, folder, recordings_dir),
                       example_key=held.example_key)
    state = BackendState(storage=storage, runner=runner, signals=signals, api_key=api_key, held_keys=held,
                         default_executor=default_executor, max_upload_bytes=max_upload_bytes,
                         max_json_bytes=max_json_bytes, keepalive_seconds=keepalive_seconds,
                         probe_timeout=probe_timeout)
    examples = MountedExamples(held.example_app_keys, policy_proxy.in_process(state))
    runner.task_apps_in_process = examples.rollout_in_process
    api = [*health.routes, *task_app_check.routes, *files.routes, *jobs.routes, *env_keys.routes,
           *backend_status.routes, *dry_rollout.routes]
    handlers: dict[Any, Any] = {ApiError: _api_error, HTTPException: _http_error, Exception: _unexpected}
    app = BackendApp(routes=[Mount("/api/v1", routes=api), Mount("/api", routes=api), *backend_status.proof_routes,
                            *examples.routes()],
                    exception_handlers=handlers)
    app.state.backend = app.backend = state
    app.add_middleware(BearerAuth, api_key=api_key, state=state)
    app.add_middleware(CloseUnreadBodies)  # outermost: a refused body of any route is not read on
    # the offline policy's model loads, and encodes the bundled dataset's queries under the seed prompt, while the
    # client is still submitting its first job
    warm_up(seed_policy_requests)
    return app


def close_app(app: Starlette) -> None:
    """Stop the app's running jobs (they end failed) and close its database."""
    state: BackendState = app.state.backend
    state.runner.shutdown()
    state.storage.close()
