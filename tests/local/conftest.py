"""A real local backend on a free loopback port per test, and an authenticated httpx client for it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from local_backend_helpers import API_KEY, ENV_KEY
from task_app_stub import serve_stub_app

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
    with serve_stub_app(ENV_KEY) as url:
        yield lambda: url
