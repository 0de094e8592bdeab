"""synth-ai 0.2.24's own ``synth-ai train``, pointed at the local backend, runs every flow to success.

The backend replays its bundled recordings for every job (``default_executor="replay"``), so no GPU, model
or LLM is needed; the stub task app answers the CLI's and the backend's ``/health`` + ``/task_info`` checks.
The 0.2.24 venv is ``$SYNTH_AI_024_VENV`` if set, else built once under ``.ci-cache/synth-ai-0.2.24``
(``synth_ai_venvs``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from synth_ai_venvs import synth_ai_cli

from synth_nb.local import LocalBackend, start_backend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "local"))
from task_app_stub import serve_stub_app  # noqa: E402

pytestmark = [pytest.mark.compat, pytest.mark.xdist_group("compat")]

CONFIGS = Path(__file__).resolve().parent / "configs"
ENV_KEY = "sk_env_compat_canary_0123"


@pytest.fixture(scope="module")
def synth_ai() -> Path:
    return synth_ai_cli("0.2.24")


@pytest.fixture(scope="module")
def task_app_url() -> Iterator[str]:
    with serve_stub_app(ENV_KEY) as url:
        yield url


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalBackend]:
    with start_backend(data_dir=tmp_path_factory.mktemp("backend"), default_executor="replay",
                       environment_api_key=ENV_KEY, executor_options={"replay": {"speed": 10}}) as running:
        yield running


@pytest.mark.parametrize("flow", ["sft", "rl", "gepa", "mipro"])
def test_synth_ai_train_reaches_success(flow: str, synth_ai: Path, backend: LocalBackend, task_app_url: str,
                                        tmp_path: Path) -> None:
    for item in CONFIGS.iterdir():
        shutil.copy(item, tmp_path / item.name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SYNTH", "BACKEND", "ENVIRONMENT"))}
    env.update(SYNTH_BACKEND_OVERRIDE=backend.url, BACKEND_OVERRIDE=backend.url, SYNTH_API_KEY=backend.api_key,
               ENVIRONMENT_API_KEY=ENV_KEY, SYNTH_DISABLE_LOGGING="1", NO_COLOR="1", HOME=str(tmp_path))
    command = [str(synth_ai), "train", f"{flow}.toml", "--poll-interval", "1"]
    if flow != "sft":
        command += ["--task-url", task_app_url]
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Final status: succeeded" in result.stdout
    assert backend.api_key not in result.stdout + result.stderr
    if flow == "rl":
        assert "Verification OK" in result.stdout  # the backend probed the task app itself
    if flow in ("gepa", "mipro"):
        assert list((tmp_path / "results").glob(f"{flow}_results_pl_*.txt"))
