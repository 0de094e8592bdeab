"""``--backend local`` is the data folder's backend process: started once, found again, never stopped by a command.

A job submitted by one command (or kernel) is attached, with its whole history, from the next one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from minimal_configs import MINIMAL_SFT

from synth_nb import pipeline
from synth_nb.local.shared import ensure_backend, find_backend, stop_backend

LINE = '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n'


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    data = tmp_path / "shared"
    monkeypatch.setenv("SYNTH_NB_BACKEND_DIR", str(data))
    pipeline.stop_local_backend()  # nothing handed over: "local" is the shared process
    yield data
    pipeline.stop_local_backend()
    stop_backend(data)


def test_local_starts_the_shared_backend_once_and_a_command_never_stops_it(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = pipeline.resolve_target("local")
    said = capsys.readouterr().out
    running = find_backend(folder)
    assert running is not None and target.url == running.url + "/api"
    assert target.own_key == (folder / "api_key").read_text().strip() and target.task_app_key
    assert f"embedded backend on {running.url} (data in {folder})" in said and target.own_key not in said
    assert pipeline.resolve_target("local") == target and capsys.readouterr().out == ""  # stated once
    assert pipeline.resolve_target(running.url) == target  # its URL (from the job registry) gets its key
    assert pipeline.example_task_app_url("banking") == running.url + "/task-apps/banking"
    pipeline.stop_local_backend()
    assert find_backend(folder) is not None  # other kernels and commands may still use it


def _synth_nb(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SYNTH_API_KEY", "SYNTH_BACKEND_OVERRIDE")}
    return subprocess.run([sys.executable, "-m", "synth_nb", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_a_job_submitted_by_one_command_is_attached_with_its_history_from_the_next(
        folder: Path, tmp_path: Path) -> None:
    ensure_backend(folder, options=("--default-executor", "replay", "--replay-speed", "50"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "sft.toml").write_text(MINIMAL_SFT)
    (project / "train.jsonl").write_text(LINE * 4)
    submitted = _synth_nb(project, "train", "-c", "sft.toml", "--backend", "local", "--no-poll")
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    job_id = next(word for word in submitted.stdout.split() if word.startswith(("job_", "ft_", "sft_")))
    attached = _synth_nb(project, "attach", job_id)  # the backend URL and key come from the registry and folder
    assert attached.returncode == 0, attached.stdout + attached.stderr
    assert "succeeded" in attached.stdout and "train.loss" in attached.stdout + attached.stderr


def test_a_job_is_attached_after_its_backend_restarted_on_another_port(folder: Path, tmp_path: Path) -> None:
    """The registry's URL is the stopped process's; the data folder still has the job and its history."""
    ensure_backend(folder, options=("--default-executor", "replay", "--replay-speed", "50"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "sft.toml").write_text(MINIMAL_SFT)
    (project / "train.jsonl").write_text(LINE * 4)
    submitted = _synth_nb(project, "train", "-c", "sft.toml", "--backend", "local")
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    job_id = next(word for word in submitted.stdout.split() if word.startswith(("job_", "ft_", "sft_")))
    first = find_backend(folder)
    assert first is not None
    stop_backend(folder)
    attached = _synth_nb(project, "attach", job_id)
    assert attached.returncode == 0, attached.stdout + attached.stderr
    again = find_backend(folder)
    assert again is not None and again.pid != first.pid
    assert f"embedded backend on {again.url}" in attached.stdout + attached.stderr  # said where it is now
    assert "succeeded" in attached.stdout and "train.loss" in attached.stdout + attached.stderr
