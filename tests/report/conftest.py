"""For the report tests: no tracker telemetry, no inherited MLflow store, the real embedded backend with the
banking task app (``tests/bundle_backend.py``), and an embedded backend that replays the bundled SFT / RL runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bundle_backend import ENV_KEY, backend_options, env_key, folder  # noqa: F401


@pytest.fixture(scope="session")
def trackio_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Trackio's store for the session (Trackio reads ``TRACKIO_DIR`` once, when it is first imported)."""
    return tmp_path_factory.mktemp("trackio")


@pytest.fixture(autouse=True)
def _no_tracker_telemetry(monkeypatch: pytest.MonkeyPatch, trackio_store: Path) -> None:
    """No tracker reaches the network: no MLflow telemetry, no W&B error reports or login, no Trackio Space,
    server, bucket or webhook."""
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    for name, value in {"WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_ERROR_REPORTING": "false",
                        "TRACKIO_DIR": str(trackio_store)}.items():
        monkeypatch.setenv(name, value)
    for name in ("WANDB_API_KEY", "WANDB_BASE_URL", "TRACKIO_SPACE_ID", "TRACKIO_SERVER_URL", "TRACKIO_BUCKET_ID",
                 "TRACKIO_DATASET_ID", "TRACKIO_WEBHOOK_URL", "HF_TOKEN"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture()
def replay_backend() -> Iterator[Any]:
    from synth_nb.local import start_backend

    with start_backend(port=0, environment_api_key=ENV_KEY, default_executor="replay",
                       executor_options={"replay": {"speed": 50}}) as b:
        yield b


@pytest.fixture(scope="session")
def _shared_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"


@pytest.fixture()
def mlflow_uri(_shared_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``MLFLOW_TRACKING_URI``: one store for the session (creating an MLflow database takes seconds); runs are
    told apart by their job-id tag."""
    monkeypatch.setenv("MLFLOW_TRACKING_URI", _shared_store)
    monkeypatch.chdir(tmp_path)  # MLflow's own default artifact root (./mlruns) lands here
    return _shared_store
