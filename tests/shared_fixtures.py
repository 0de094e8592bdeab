"""The suite's shared fixtures: a real embedded backend, the bundled banking task app, a clean working folder,
an IPython shell with the extension loaded, and the stub task app; registered from ``tests/conftest.py``.

The task-app key is a canary that must appear in no output: a test module (or a conftest) that names its
own ``ENV_KEY`` gets it in every fixture here, so a leak names the module. A module that needs another backend
overrides ``backend_options``; any fixture here is overridden by one of the same name closer to the test.
The in-test backend and fault transport (``tests/fake_backend.py``) are fixtures here too.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_backend import fake_backend, faulty_transport, no_backoff

__all__ = ["ENV_KEY", "assert_ended_by_ctrl_c", "backend", "backend_options", "env_key", "fake_backend",
           "faulty_transport", "folder", "ip", "killed_at_exit", "no_backoff", "prompt_learning_jobs", "run_magic",
           "signed_in_folder", "task_app"]

#: the task-app key of a module that names none of its own
ENV_KEY = "sk_env_CANARY_pipeline_aaaaaa_7777"

#: settings a test must not inherit from the shell that runs the suite
_INHERITED = ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_SKIP_TASK_APP_HEALTH_CHECK", "SYNTH_API_KEY")


@pytest.fixture()
def env_key(request: pytest.FixtureRequest) -> str:
    """The test module's own ``ENV_KEY`` canary, else the suite's."""
    return str(getattr(request.module, "ENV_KEY", ENV_KEY))


@pytest.fixture()
def backend_options(env_key: str) -> dict[str, Any]:
    """What ``start_backend`` is given besides a free port."""
    return {"environment_api_key": env_key}


@pytest.fixture()
def backend(backend_options: dict[str, Any]) -> Iterator[Any]:
    """A real embedded backend on a free 127.0.0.1 port, in this process."""
    from synth_nb.local import start_backend

    with start_backend(port=0, **backend_options) as running:
        yield running


@pytest.fixture()
def task_app(env_key: str) -> Iterator[Any]:
    """The bundled banking task app behind ``env_key``."""
    from synth_nb.local.examples import start_task_app

    with start_task_app("banking", api_key=env_key) as app:
        yield app


def _working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env_key: str) -> Path:
    for name in _INHERITED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ENVIRONMENT_API_KEY", env_key)
    monkeypatch.setenv("SYNTH_NB_BACKEND_DIR", str(tmp_path / "shared-backend"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env_key: str) -> Path:
    """The working folder: nothing inherited, the task-app key set, its own ``--backend local`` data folder."""
    return _working_folder(tmp_path, monkeypatch, env_key)


@pytest.fixture()
def signed_in_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env_key: str, backend: Any) -> Path:
    """``folder`` with ``SYNTH_API_KEY`` set to ``backend``'s key."""
    working = _working_folder(tmp_path, monkeypatch, env_key)
    monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
    return working


def prompt_learning_jobs(backend: Any) -> list[Any]:
    """The prompt-learning jobs ``backend`` holds, asked over HTTP."""
    answer = httpx.get(f"{backend.url}/api/prompt-learning/online/jobs",
                       headers={"Authorization": f"Bearer {backend.api_key}"}, timeout=30)
    answer.raise_for_status()
    body = answer.json()
    return list(body.get("jobs", body) if isinstance(body, dict) else body)


@pytest.fixture(scope="module")
def ip() -> Any:
    """The test process's IPython shell (started on first use) with ``%synth_train`` loaded."""
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.run_line_magic("load_ext", "synth_nb")
    return shell


def run_magic(folder: Path, line: str, notebook: str = "train.ipynb") -> Any:
    """``%synth_train line`` run in a notebook ``notebook`` of ``folder`` (its relative paths mean ``folder``)."""
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.run_line_magic("load_ext", "synth_nb")
    shell.user_ns["__session__"] = str(folder / notebook)
    try:
        return shell.run_line_magic("synth_train", line)
    finally:
        shell.user_ns.pop("__session__", None)


def assert_ended_by_ctrl_c(proc: subprocess.Popen[str], out: str, err: str, secret: str) -> None:
    """A command stopped by Ctrl-C exits 130 with no traceback and no secret in what it printed."""
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err and secret not in out + err


@contextmanager
def killed_at_exit(proc: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """``proc``, killed on the way out if still running: a failing test leaves no process behind."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
