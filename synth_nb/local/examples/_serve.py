"""Serve an ASGI app with uvicorn on 127.0.0.1 in a daemon thread, with a handle that stops it.

Example task apps run next to a notebook kernel or the local backend, so they must not block the
caller and must bind loopback only; port 0 picks a free port.
"""

from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["ServerHandle", "serve_in_thread"]


class ServerHandle:
    """A running uvicorn server: ``url`` (no trailing slash), ``stop()``, usable as a context manager."""

    def __init__(self, server: Any, thread: threading.Thread, url: str) -> None:
        self._server = server
        self._thread = thread
        self.url = url

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def stop(self, timeout: float = 10.0) -> None:
        """Ask uvicorn to exit and wait for its thread (idempotent)."""
        self._server.should_exit = True
        self._thread.join(timeout=timeout)

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_in_thread(app: Any, *, port: int = 0, name: str = "asgi", startup_timeout: float = 20.0) -> ServerHandle:
    """Start ``app`` on 127.0.0.1:``port`` and return once it accepts connections."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False,
                            lifespan="off")
    server = uvicorn.Server(config)
    errors: list[BaseException] = []

    def _run() -> None:
        try:
            server.run()  # uvicorn's own loop choice: uvloop when installed
        except BaseException as exc:  # surfaced to the caller below
            errors.append(exc)

    thread = threading.Thread(target=_run, name=f"{name}-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if errors or not thread.is_alive():
            raise RuntimeError(f"{name} server failed to start on 127.0.0.1:{port}: {errors[0] if errors else 'exited'}")
        if time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"{name} server did not start within {startup_timeout:.0f} s")
        time.sleep(0.02)
    bound_port = next(sock.getsockname()[1] for srv in server.servers for sock in srv.sockets)
    return ServerHandle(server, thread, f"http://127.0.0.1:{bound_port}")
