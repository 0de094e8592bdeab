"""A real local backend on a free loopback port per test, and an authenticated httpx client for it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from local_backend_helpers import API_KEY, ENV_KEY
from task_app_stub import create_stub_app

from synth_nb.local import LocalBackend, start_backend


@pytest.fixture
def recordings(tmp_path: Path) -> Path:
    """The folder whose recordings the ``backend`` fixture's replays may read."""
    folder = tmp_path / "recordings"
    folder.mkdir()
    return folder


@pytest.fixture
def backend(tmp_path: Path, recordings: Path) -> Iterator[LocalBackend]:
    with start_backend(data_dir=tmp_path / "data", api_key=API_KEY, environment_api_key=ENV_KEY,
                       executor_options={"replay": {"speed": 40}}, keepalive_seconds=0.2,
                       cancel_grace_seconds=2.0, max_upload_bytes=64 * 1024, recordings_dir=recordings) as running:
        yield running


@pytest.fixture
def client(backend: LocalBackend) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=backend.url + "/api", headers={"Authorization": f"Bearer {API_KEY}"},
                      timeout=10.0, trust_env=False) as http:
        yield http


@pytest.fixture
def task_app() -> Iterator[Callable[[], str]]:
    """Start the stub task app (``/health`` + ``/task_info`` behind ENV_KEY); yields a URL getter."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_stub_app(ENV_KEY), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.01)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    yield lambda: url
    server.should_exit = True
    thread.join(timeout=5)
