"""For the report tests: no tracker telemetry, no inherited MLflow store, the real embedded backend with the
banking task app (``tests/bundle_backend.py``), and an embedded backend that replays the bundled SFT / RL runs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from bundle_backend import backend, folder, task_app  # noqa: F401


@pytest.fixture(autouse=True)
def _no_tracker_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


@pytest.fixture()
def replay_backend() -> Iterator[Any]:
    from synth_nb.local import start_backend

    with start_backend(port=0, default_executor="replay", executor_options={"replay": {"speed": 50}}) as b:
        yield b
