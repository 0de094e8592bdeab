"""Test support: a fake JobContext whose ``serve_policy`` is a real loopback HTTP route."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from synth_nb.local.examples._serve import ServerHandle, serve_in_thread

TASK_APP_KEY = "sk_env_test_" + "k" * 20


class PolicyServer:
    """Stands in for the backend's ``/v1/policies/{id}/chat/completions`` route."""

    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}
        self.requests = 0

        async def chat(request: Request) -> JSONResponse:
            handler = self.handlers.get(request.path_params["policy_id"])
            if handler is None:
                return JSONResponse({"detail": "unknown policy"}, status_code=404)
            self.requests += 1
            body = await request.json()
            try:
                return JSONResponse(await run_in_threadpool(handler, body))
            except Exception as exc:
                return JSONResponse({"detail": f"{type(exc).__name__}: {exc}"}, status_code=502)

        app = Starlette(routes=[Route("/v1/policies/{policy_id}/chat/completions", chat, methods=["POST"])])
        self.server: ServerHandle = serve_in_thread(app, name="fake-backend")

    def add(self, handler: Any) -> str:
        policy_id = f"pol_{secrets.token_hex(6)}"
        self.handlers[policy_id] = handler
        return f"{self.server.url}/v1/policies/{policy_id}"


class FakeContext:
    """Implements the JobContext protocol in memory; thread-safe like the real one."""

    def __init__(self, body: dict[str, Any], work_dir: Path, policies: PolicyServer, kind: str = "prompt_learning"):
        self.job_id = f"pl_{secrets.token_hex(4)}"
        self.kind = kind
        self.body = body
        self.work_dir = work_dir
        self.cancelled = threading.Event()
        self.backend_url = policies.server.url
        self.environment_api_key: str | None = None
        self.events: list[dict[str, Any]] = []
        self.metrics: list[dict[str, Any]] = []
        self.result: dict[str, Any] = {}
        self._policies = policies
        self._lock = threading.Lock()
        self.on_event: Any = None

    def emit(self, type: str, message: str = "", data: dict[str, Any] | None = None, level: str = "info") -> None:
        with self._lock:
            event = {"seq": len(self.events) + 1, "type": type, "message": message, "data": data or {},
                     "level": level}
            self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def metric(self, name: str, step: int, value: float, data: dict[str, Any] | None = None) -> None:
        with self._lock:
            self.metrics.append({"name": name, "step": step, "value": value, "data": data or {}})

    def update_result(self, **fields: Any) -> None:
        with self._lock:
            self.result.update(fields)

    def file_path(self, file_id: str) -> Path:
        raise KeyError(file_id)

    def serve_policy(self, handler: Any) -> str:
        return self._policies.add(handler)

    def of_type(self, type_: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == type_]


def run_cancelled(run: Callable[[FakeContext], Any], ctx: FakeContext, when: Callable[[dict[str, Any]], bool]) -> None:
    """Run ``run(ctx)`` in a thread that cancels it at the first event ``when`` accepts, and see it stop."""
    def cancel(event: dict[str, Any]) -> None:
        if when(event):
            ctx.cancelled.set()

    ctx.on_event = cancel
    worker = threading.Thread(target=run, args=(ctx,))
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive()
