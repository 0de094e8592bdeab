"""``synth-nb backend``: the key is generated once, saved 0600, printed masked unless asked; Ctrl-C stops.

``--start`` / ``--status`` / ``--stop`` / ``--task-app-url`` manage the background backend of a data folder.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

#: runs ``synth-nb backend`` alone (without the other sub-commands' imports)
RUN_CLI = ("import argparse, sys; from synth_nb.cli import backend; p = argparse.ArgumentParser(); "
           "backend.configure(p); sys.exit(backend.run(p.parse_args(sys.argv[1:])))")


def test_cli_generates_saves_and_masks_the_key(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    outputs = []
    for extra in ([], ["--print-key"]):
        proc = subprocess.Popen([sys.executable, "-c", RUN_CLI, "--port", "0", "--data-dir", str(data_dir), *extra],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(5)]
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=15)
        assert proc.returncode == 0
        outputs.append("".join(lines) + rest)
    key_file = data_dir / "api_key"
    key = key_file.read_text().strip()
    assert key.startswith("sk_local_") and oct(os.stat(key_file).st_mode & 0o777) == "0o600"
    assert key not in outputs[0] and f"••••{key[-4:]}" in outputs[0] and "(new)" in outputs[0]
    assert key in outputs[1] and "(new)" not in outputs[1]  # reused, shown on request


def _cli(*args: str, folder: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m synth_nb backend …`` for ``folder``, as a person would type it."""
    return subprocess.run([sys.executable, "-m", "synth_nb", "backend", "--data-dir", str(folder), *args],
                          capture_output=True, text=True, timeout=timeout)


def _gone(pid: int) -> bool:
    """No such process, or only its exit status left for its parent to collect (a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rpartition(")")[2].split()[0] == "Z"


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    from synth_nb.local.shared import stop_backend

    data = tmp_path / "backend"
    yield data
    stop_backend(data)


def test_status_start_and_stop_manage_the_background_backend(folder: Path) -> None:
    assert _cli("--status", folder=folder).returncode == 1
    started = _cli("--start", folder=folder)
    assert started.returncode == 0, started.stderr
    assert "started" in started.stdout and str(folder) in started.stdout
    again = _cli("--start", folder=folder)
    assert again.returncode == 0 and "already running" in again.stdout
    info = json.loads((folder / "backend.json").read_text())
    status = _cli("--status", folder=folder)
    assert status.returncode == 0, status.stderr
    text = status.stdout
    assert info["url"] in text and f"pid {info['pid']}" in text and f"data folder: {folder}" in text
    assert re.search(r"up \d+m \d+s", text) and "jobs: none yet" in text
    assert f"{info['url']}/task-apps/banking" in text
    key = (folder / "api_key").read_text().strip()
    assert key not in text and key not in started.stdout + started.stderr
    stopped = _cli("--stop", folder=folder)
    assert stopped.returncode == 0 and f"pid {info['pid']}" in stopped.stdout
    assert not (folder / "backend.json").exists()
    assert _gone(info["pid"])
    assert _cli("--status", folder=folder).returncode == 1
    assert _cli("--stop", folder=folder).returncode == 1


def test_status_counts_the_jobs_by_status(folder: Path) -> None:
    from synth_nb.local.shared import ensure_backend

    backend = ensure_backend(folder, options=("--replay-speed", "50"))
    with httpx.Client(base_url=backend.url + "/api", headers={"Authorization": f"Bearer {backend.api_key}"},
                      timeout=30, trust_env=False) as http:
        job = http.post("/learning/jobs", json={"metadata": {"local_executor": "replay", "recording": "sft"}}).json()
        http.post(f"/learning/jobs/{job['id']}/start")
        for _ in range(600):
            if http.get(f"/learning/jobs/{job['id']}").json()["status"] == "succeeded":
                break
            time.sleep(0.1)
    assert "jobs: 1 succeeded" in _cli("--status", folder=folder).stdout


def test_task_app_url_prints_the_url_of_an_example_the_backend_serves(folder: Path) -> None:
    answer = _cli("--task-app-url", "banking", folder=folder)
    assert answer.returncode == 0, answer.stderr
    url = answer.stdout.strip()
    assert url.startswith("http://127.0.0.1:") and url.endswith("/task-apps/banking")
    key = (folder / "task_app_key").read_text().strip()
    assert httpx.get(url + "/health", headers={"X-API-Key": key}, trust_env=False).status_code == 200
    assert httpx.get(url + "/health", trust_env=False).status_code == 401
    assert _cli("--task-app-url", "charclass", folder=folder).stdout.strip() == url.replace("banking", "charclass")
