"""Fixtures for re-running and forking jobs from their bundles: a real embedded backend (no default executor,
so each job's config picks one) and the bundled banking task app, both on 127.0.0.1 in this process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: the task app's key: a canary that must appear in no bundle, output or file
ENV_KEY = "sk_env_CANARY_bundle_eeeeee_6666"


@pytest.fixture()
def backend() -> Iterator[Any]:
    from synth_nb.local import start_backend

    with start_backend(port=0, environment_api_key=ENV_KEY, default_executor=None) as b:
        yield b


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: Any) -> Path:
    for var in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_SKIP_TASK_APP_HEALTH_CHECK"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ENVIRONMENT_API_KEY", ENV_KEY)
    monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
    monkeypatch.setenv("SYNTH_NB_BACKEND_DIR", str(tmp_path / "shared-backend"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture()
def task_app() -> Iterator[Any]:
    from synth_nb.local.examples import start_task_app

    with start_task_app("banking", api_key=ENV_KEY) as app:
        yield app
