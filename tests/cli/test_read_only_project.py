"""A project folder that cannot be written, with a remote backend: nothing is sent (one line, exit 2); and a
job created before its folder failed is never lost: the error says its id and how to follow or cancel it.

The folder is really read-only: a read-only tmpfs when the tests run as root (who may write anywhere else), a
folder without write permission otherwise. The backend is the real embedded one, reached by its URL.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from minimal_configs import LOCAL_GEPA
from shared_fixtures import prompt_learning_jobs

from synth_nb.cli.main import main
from synth_nb.pipeline import actions


@pytest.fixture
def read_only_project(folder: Path, task_app: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project holding a GEPA config, made read-only after it was written; the working directory."""
    project = folder / "ro"
    project.mkdir()
    config = LOCAL_GEPA.format(task_url=task_app.url, budget=24)
    root = os.geteuid() == 0
    if root:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(project)], check=True)
    (project / "gepa.toml").write_text(config)
    if root:
        subprocess.run(["mount", "-o", "remount,ro", str(project)], check=True)
    else:
        project.chmod(0o500)
    monkeypatch.chdir(project)
    try:
        yield project
    finally:
        os.chdir(folder)
        if root:
            subprocess.run(["umount", str(project)], check=True)
        else:
            project.chmod(0o700)


def test_nothing_is_sent_from_a_folder_that_cannot_be_written(read_only_project: Path, backend: Any,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "-y"]) == 2
    out, err = capsys.readouterr()
    assert "Traceback" not in err and err.count("error:") == 1
    assert f"cannot write to {read_only_project / '.synth_nb'}" in err and "nothing was sent" in err
    assert prompt_learning_jobs(backend) == []


def test_a_job_created_before_its_folder_failed_is_named_with_how_to_reach_it(
        read_only_project: Path, backend: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The folder became read-only between the check and the job's creation (another process, a remount)."""
    monkeypatch.setattr(actions, "_check_writable", lambda folder, batch: None)
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "-y"]) == 1
    out, err = capsys.readouterr()
    (job,) = prompt_learning_jobs(backend)
    job_id = job.get("job_id") or job.get("id")
    assert "Traceback" not in err and f"job {job_id} was created on {backend.url}/api" in err
    assert f"synth-nb attach {job_id} --backend {backend.url}/api" in err
    assert f"synth-nb cancel {job_id} --backend {backend.url}/api" in err
