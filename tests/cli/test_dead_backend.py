"""A backend that stops under a followed job, in a real terminal at 80×24 and 120×40.

The embedded backend is a process of its own, named with its pid in its data folder's info file: killed
(``kill -9``, by that pid) mid-job, ``train`` says so within seconds, says what to run, and ends with exit 1
instead of retrying for ``--poll-timeout``; ``synth-nb attach ID`` then restarts it and shows how the job
ended. A remote backend that stops answering is retried, and the outage line says how to attach to or
cancel the job later.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from minimal_configs import MINIMAL_GEPA
from terminal_session import CLI, WAIT, clean_env, sizes, spawn

from synth_nb.local.shared import find_backend, stop_backend


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "gepa.toml").write_text(MINIMAL_GEPA)
    return tmp_path


@pytest.fixture()
def data_dir(project: Path) -> Iterator[Path]:
    """The embedded backend's data folder, its process started there replaying recordings slowly."""
    folder = project / "backend-data"
    subprocess.run([*CLI, "backend", "--start", "--port", "0", "--data-dir", str(folder), "--default-executor",
                    "replay", "--replay-speed", "0.2"], check=True, capture_output=True, timeout=300,
                   env=clean_env())
    try:
        yield folder
    finally:
        stop_backend(folder)  # the one ``attach`` restarted, if any


def _env(data_dir: Path) -> dict[str, str]:
    return clean_env(SYNTH_NB_BACKEND_DIR=str(data_dir), ENVIRONMENT_API_KEY="sk_env_dead_backend_0123456789",
                     SYNTH_SKIP_TASK_APP_HEALTH_CHECK="1")


@sizes
def test_killing_the_embedded_backend_ends_train_with_what_to_run(project: Path, data_dir: Path, children: list,
                                                                  size: tuple[int, int]) -> None:
    child = spawn(["train", "-c", "gepa.toml", "--backend", "local", "--yes"], project, size, _env(data_dir),
                  children)
    child.expect(r"submitted prompt_learning job (\S+) to")
    job_id = child.match.group(1)
    child.expect("prompt.learning.progress")  # mid-job
    pid = json.loads((data_dir / "backend.json").read_text())["pid"]
    os.kill(pid, signal.SIGKILL)
    child.expect(f"has stopped while job {job_id} was running", timeout=60)
    said = child.before + child.after
    child.expect(pexpect.EOF, timeout=60)  # not --poll-timeout's hour
    said += child.before
    child.close()
    assert child.exitstatus == 1
    assert f"pid {pid}" in said
    assert f"synth-nb attach {job_id}   restarts it and shows how the job ended" in " ".join(said.split("\r\n"))
    assert "Traceback" not in said and "unreachable since" not in said

    attached = subprocess.run([*CLI, "attach", job_id], cwd=project, env=_env(data_dir), capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert "Final status: failed" in attached.stdout
    assert "stopped while this job was running" in attached.stdout


@sizes
def test_a_remote_backend_that_stops_answering_is_retried_with_the_attach_and_cancel_hint(
        project: Path, data_dir: Path, children: list, size: tuple[int, int]) -> None:
    # a backend process addressed by URL only (not its data folder), killed: it stops answering without
    # a graceful stop marking its jobs failed first, as a remote backend that goes away does
    found = find_backend(data_dir)
    assert found is not None
    env = clean_env(SYNTH_API_KEY=found.api_key, ENVIRONMENT_API_KEY="sk_env_dead_backend_0123456789",
                    SYNTH_SKIP_TASK_APP_HEALTH_CHECK="1", SYNTH_NB_BACKEND_DIR=str(project / "unused"))
    child = spawn(["train", "-c", "gepa.toml", "--backend", found.url, "--yes", "--poll-interval", "1"],
                  project, size, env, children)
    child.expect(r"submitted prompt_learning job (\S+) to")
    job_id = child.match.group(1)
    child.expect("prompt.learning.progress")
    os.kill(found.pid, signal.SIGKILL)
    child.expect("backend unreachable since", timeout=WAIT)
    child.expect("retrying")
    child.expect(f"synth-nb cancel {job_id}", timeout=10)
    line = " ".join((child.before + child.after).split("\r\n"))
    assert f"synth-nb attach {job_id}" in line
    assert child.isalive()  # a remote backend may come back: still retrying
    child.sendintr()
    child.expect(pexpect.EOF, timeout=WAIT)
    child.close()
    assert child.exitstatus == 130
