"""The smallest task app 0.2.24's pre-submission checks accept: ``/health`` and ``/task_info`` behind
``X-API-Key`` (400 on a wrong key, like the synth-ai scaffold). It serves no rollouts: replay jobs need none.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def create_stub_app(api_key: str) -> Starlette:
    """``app.state.seen`` lists each request's path and query string, in order."""
    seen: list[tuple[str, str]] = []

    def _authorised(request: Request) -> bool:
        seen.append((request.url.path, request.url.query))
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        keys = {request.headers.get("x-api-key"), bearer, *request.headers.get("x-api-keys", "").split(",")}
        return api_key in keys

    async def health(request: Request) -> JSONResponse:
        if not _authorised(request):
            return JSONResponse({"detail": {"error": {"code": "unauthorised"}}}, status_code=400)
        return JSONResponse({"healthy": True, "auth": {"required": True}})

    async def task_info(request: Request) -> JSONResponse:
        if not _authorised(request):
            return JSONResponse({"detail": {"error": {"code": "unauthorised"}}}, status_code=400)
        return JSONResponse({"taskset": {"id": "stub", "name": "stub task app"}})

    async def root(request: Request) -> JSONResponse:
        seen.append((request.url.path, request.url.query))
        return JSONResponse({"status": "ok", "service": "stub"})

    app = Starlette(routes=[Route("/", root), Route("/health", health), Route("/task_info", task_info)])
    app.state.seen = seen
    return app


@contextmanager
def serve_stub_app(api_key: str) -> Iterator[str]:
    """The stub on a free 127.0.0.1 port in a thread of this process; yields its URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_stub_app(api_key), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=5)
