"""``start_backend``: background server on loopback, context manager, cheap package import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from synth_nb.local import start_backend


def test_importing_the_package_loads_no_server_code() -> None:
    code = ("import sys, synth_nb.local; heavy = [m for m in ('starlette', 'uvicorn', 'sqlite3') if m in sys.modules];"
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_context_manager_serves_then_stops(tmp_path: Path) -> None:
    with start_backend(data_dir=tmp_path) as backend:
        assert backend.url.startswith("http://127.0.0.1:") and backend.api_url == backend.url + "/api"
        assert backend.api_key.startswith("sk_local_") and backend.api_key not in repr(backend)
        ok = httpx.get(backend.api_url + "/health", headers={"Authorization": f"Bearer {backend.api_key}"},
                       trust_env=False)
        assert ok.status_code == 200
        url = backend.url
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/api/health", trust_env=False)
    assert (tmp_path / "backend.sqlite3").exists()  # a given data dir is kept


def test_temporary_data_dir_is_removed() -> None:
    backend = start_backend(api_key="sk_local_given_key_123")
    folder = backend.data_dir
    assert backend.api_key == "sk_local_given_key_123" and folder.exists()
    backend.stop()
    assert not folder.exists()


def test_busy_port_raises(tmp_path: Path) -> None:
    with start_backend(data_dir=tmp_path / "a") as first:
        port = int(first.url.rsplit(":", 1)[1])
        with pytest.raises(OSError):
            start_backend(port=port, data_dir=tmp_path / "b")


def test_empty_api_key_is_refused(tmp_path: Path) -> None:
    from synth_nb.local import create_app

    with pytest.raises(ValueError):
        create_app(tmp_path, "")


def test_one_server_per_data_dir(tmp_path: Path) -> None:
    with start_backend(data_dir=tmp_path), pytest.raises(RuntimeError, match="already using"):
        start_backend(data_dir=tmp_path)
    with start_backend(data_dir=tmp_path) as again:  # free once the first one stopped
        assert again.url
