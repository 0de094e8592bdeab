"""Run the local backend with uvicorn in a background thread (for notebooks, tests and the CLI).

Its connections are bounded (``synth_nb.local.connections``): how many are open, how long a request's head
may take, and a refused body is answered before the connection closes.
"""

from __future__ import annotations

import secrets
import shutil
import socket
import sqlite3
import tempfile
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn

from synth_nb.local.connections import HEADER_TIMEOUT, MAX_CONNECTIONS, guarded_protocol
from synth_nb.local.errors import DataFolderError
from synth_nb.local.examples import task_app_path
from synth_nb.local.server.app import close_app, create_app

__all__ = ["LocalBackend", "generate_api_key", "start_backend"]

HOST = "127.0.0.1"


def generate_api_key() -> str:
    return f"sk_local_{secrets.token_hex(24)}"


class LocalBackend:
    """A backend running in this process: ``.url`` (no ``/api`` suffix), ``.api_key``, ``.stop()``; a
    context manager. ``shared.ensure_backend`` runs one in a process of its own instead."""

    def __init__(self, server: uvicorn.Server, thread: threading.Thread, app: Any, url: str, api_key: str,
                 data_dir: Path, owns_data_dir: bool) -> None:
        self._server = server
        self._thread = thread
        self.app = app
        self.url = url
        self.api_key = api_key
        self.data_dir = data_dir
        self._owns_data_dir = owns_data_dir
        self._stopped = False

    @property
    def api_url(self) -> str:
        return self.url + "/api"

    @property
    def task_app_key(self) -> str:
        """The key the bundled example task apps served by this backend accept (besides held env keys)."""
        key: str = self.app.state.backend.held_keys.example_key
        return key

    def task_app_url(self, name: str) -> str:
        """Where this backend serves the bundled example task app ``name`` (``banking``, ``charclass``)."""
        return self.url + task_app_path(name)

    def __repr__(self) -> str:  # never shows the key
        return f"LocalBackend(url={self.url!r}, data_dir={str(self.data_dir)!r})"

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving; running jobs end ``failed`` (the server went away). Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self.app.state.backend.runner.shutdown()
        self.app.state.backend.signals.close()
        self._server.should_exit = True
        self._thread.join(timeout=timeout)
        close_app(self.app)
        if self._owns_data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> LocalBackend:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def start_backend(port: int = 0, data_dir: str | Path | None = None, api_key: str | None = None, *,
                  header_timeout: float = HEADER_TIMEOUT, max_connections: int = MAX_CONNECTIONS,
                  **options: Any) -> LocalBackend:
    """Start a backend on ``127.0.0.1:port`` (0 = a free port) and return once it accepts requests.

    ``data_dir=None`` uses a temporary folder removed by ``stop()``; ``api_key=None`` generates one.
    ``header_timeout`` (seconds for a request's headers) and ``max_connections`` (open at once) bound what
    clients may hold. ``options`` go to ``create_app`` (e.g. ``default_executor="replay"``, ``environment_api_key``).
    """
    owns = data_dir is None
    folder = Path(tempfile.mkdtemp(prefix="synth-nb-backend-")) if data_dir is None else Path(data_dir)
    key = api_key or generate_api_key()
    try:
        app = create_app(folder, key, **options)
    except (OSError, sqlite3.Error) as exc:  # a read-only data folder, a full disk
        raise DataFolderError.of(folder, exc) from None
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError:
        sock.close()
        close_app(app)
        raise
    url = f"http://{HOST}:{sock.getsockname()[1]}"
    app.state.backend.runner.base_url = url
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2,
                            access_log=False,
                            http=guarded_protocol(header_timeout=header_timeout, max_connections=max_connections))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="synth-nb-backend",
                              daemon=True)
    thread.start()
    for _ in range(400):
        if server.started or not thread.is_alive():
            break
        threading.Event().wait(0.025)
    if not server.started:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()
        close_app(app)
        raise RuntimeError(f"the local backend did not start on {url}")
    return LocalBackend(server, thread, app, url, key, folder, owns)
