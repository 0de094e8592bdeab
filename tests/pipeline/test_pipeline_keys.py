"""The keys the pipeline resolved are the ones the embedded backend uses for task apps.

``share_keys`` seals ENVIRONMENT_API_KEY with the backend's public key (``POST /api/v1/env-keys``); the
backend keeps it in memory only. RL on ``--backend local`` with the key only in ``.env`` passes the
backend's ``/rl/verify_task_app``, and a failed check reaches the user as one plain sentence.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from minimal_configs import MINIMAL_RL

from synth_nb import pipeline
from synth_nb.errors import ClientError
from synth_nb.local import LocalBackend, start_backend
from synth_nb.local.examples import start_task_app
from synth_nb.pipeline import SecretSources, Target
from synth_nb.secrets import SecretBundle

TASK_KEY = "sk_env_CANARY_dotenv_only_4d4d4d"


@pytest.fixture
def backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalBackend]:
    monkeypatch.delenv("ENVIRONMENT_API_KEY", raising=False)
    with start_backend(data_dir=tmp_path / "data", default_executor="replay",
                       executor_options={"replay": {"speed": 50}}) as running:
        yield running


@pytest.fixture
def task_app() -> Iterator[Any]:
    with start_task_app("charclass", api_key=TASK_KEY) as app:
        yield app


def _target(backend: LocalBackend) -> Target:
    return Target(backend.api_url, backend.api_key, backend.task_app_key)


def _rl_config(folder: Path, task_url: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rl.toml"
    path.write_text(MINIMAL_RL.replace("https://my-task-app.example.com", task_url))
    return path


def test_a_shared_key_is_opened_by_the_backend_and_kept_out_of_its_files_and_answers(
        backend: LocalBackend, tmp_path: Path) -> None:
    bundle = SecretBundle().with_value("ENVIRONMENT_API_KEY", TASK_KEY, source=".env")
    assert backend.app.state.backend.runner.environment_api_key is None
    assert pipeline.share_keys(_target(backend), [bundle, bundle, None]) == 1
    assert backend.app.state.backend.runner.environment_api_key == TASK_KEY
    with httpx.Client(base_url=backend.api_url, headers={"Authorization": f"Bearer {backend.api_key}"},
                      trust_env=False) as http:
        public = http.get("/v1/crypto/public-key").json()
        assert public["alg"] == "libsodium.sealedbox.v1"
        status = http.get("/v1/local-backend").json()
        assert status["holds_environment_api_key"] is True and TASK_KEY not in str(status)
        refused = http.post("/v1/env-keys", json={"name": "ENVIRONMENT_API_KEY", "ciphertext_b64": "bm90IGEgYm94"})
        assert refused.status_code == 400 and "sealed box" in refused.json()["detail"]
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            assert TASK_KEY.encode() not in path.read_bytes(), path
    # a hosted backend, or local before it started, is given nothing
    assert pipeline.share_keys(Target("https://example.test/api"), [bundle]) == 0


def test_the_example_apps_accept_the_backends_own_key_and_every_key_it_was_given(backend: LocalBackend) -> None:
    url = backend.task_app_url("banking") + "/health"
    assert httpx.get(url, headers={"X-API-Key": backend.task_app_key}, trust_env=False).status_code == 200
    assert httpx.get(url, headers={"X-API-Key": TASK_KEY}, trust_env=False).status_code == 401
    bundle = SecretBundle().with_value("ENVIRONMENT_API_KEY", TASK_KEY, source=".env")
    pipeline.share_keys(_target(backend), [bundle])
    assert httpx.get(url, headers={"X-API-Key": TASK_KEY}, trust_env=False).status_code == 200


def test_a_missing_environment_api_key_is_the_example_apps_key(backend: LocalBackend, tmp_path: Path) -> None:
    bundle = SecretSources(environ={}, cwd=tmp_path).resolve(_target(backend))
    assert bundle.secret_value("ENVIRONMENT_API_KEY") == backend.task_app_key
    assert "local backend" in bundle.get("ENVIRONMENT_API_KEY").source  # type: ignore[union-attr]
    (tmp_path / ".env").write_text(f"ENVIRONMENT_API_KEY={TASK_KEY}\n")
    assert SecretSources(environ={}, cwd=tmp_path).resolve(_target(backend)).secret_value(
        "ENVIRONMENT_API_KEY") == TASK_KEY  # the user's own key wins


def test_without_the_key_the_backends_hint_is_one_plain_sentence(backend: LocalBackend, task_app: Any,
                                                                  tmp_path: Path) -> None:
    target = Target(backend.api_url, backend.api_key)  # nothing shared, no example key to stand in
    config = _rl_config(tmp_path / "project", task_app.url)
    (config.parent / ".env").write_text(f"ENVIRONMENT_API_KEY={TASK_KEY}\n")
    prepared = pipeline.prepare_config(config, overrides=pipeline.build_overrides({}, target), target=target,
                                sources=SecretSources(environ={}, cwd=config.parent))
    assert prepared.ok, prepared.error
    with pytest.raises(ClientError) as caught:
        asyncio.run(pipeline.submit_plan(prepared.plan, target, backend.api_key))  # type: ignore[arg-type]
    message = str(caught.value)
    assert "this backend holds no ENVIRONMENT_API_KEY" in message and task_app.url in message
    assert "[{" not in message and "attempts" not in message and "\n" not in message
    assert TASK_KEY not in message


def _train(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ENVIRONMENT_API_KEY", "SYNTH_API_KEY")}
    return subprocess.run([sys.executable, "-m", "synth_nb", "train", *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def shared_folder(tmp_path: Path) -> Iterator[Path]:
    from synth_nb.local.shared import ensure_backend, stop_backend

    data = tmp_path / "shared"
    ensure_backend(data, options=("--default-executor", "replay", "--replay-speed", "50"))
    yield data
    stop_backend(data)


def test_rl_on_backend_local_with_the_key_only_in_dotenv_passes_the_backends_check(
        shared_folder: Path, task_app: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNTH_NB_BACKEND_DIR", str(shared_folder))
    project = _rl_config(tmp_path / "project", task_app.url).parent
    (project / ".env").write_text(f"ENVIRONMENT_API_KEY={TASK_KEY}\n")
    done = _train(project, "-c", "rl.toml", "--backend", "local", "--no-poll")
    assert done.returncode == 0, done.stdout + done.stderr
    assert TASK_KEY not in done.stdout + done.stderr
    assert "rl" in done.stderr.lower()  # --no-poll: "submitted rl job …" is said on stderr
    # the backend kept running after the command, and holds the key from .env
    from synth_nb.local.shared import find_backend

    running = find_backend(shared_folder)
    assert running is not None and running.api_key not in done.stdout + done.stderr
    # without the key, the backend is given its example apps' key, which this task app refuses: one sentence
    (project / ".env").unlink()
    refused = _train(project, "-c", "rl.toml", "--backend", "local", "--no-poll")
    assert refused.returncode != 0
    errors = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "refused the ENVIRONMENT_API_KEY this backend holds" in errors[0]
    assert "attempts" not in refused.stderr and "[{" not in refused.stderr
