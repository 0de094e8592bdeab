"""Ctrl-C while watching a job this command did not create only stops watching: ``synth-nb attach`` and
``synth-nb train --attach`` exit 130, say how to cancel, and the job keeps running; ``synth-nb cancel``
cancels it.

The job is created by ``synth-nb train --no-poll`` against the in-test backend (``fake_backend``, where every
job runs until cancelled), then watched by a second command in a subprocess that gets the interrupt.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from minimal_configs import MINIMAL_SFT
from shared_fixtures import assert_ended_by_ctrl_c, killed_at_exit

HANG = 60.0  # reached only when something hangs
GOOD_LINE = '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n'


def _env(backend: object) -> dict[str, str]:
    env = {**os.environ, "SYNTH_API_KEY": backend.api_key, "PYTHONUNBUFFERED": "1"}  # type: ignore[attr-defined]
    env.pop("SYNTH_BACKEND_OVERRIDE", None)
    return env


def _cli(args: list[str], folder: Path, backend: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "synth_nb", *args], cwd=folder, env=_env(backend), text=True,
                          capture_output=True, timeout=HANG)


def _polled(backend: object, job_id: str, times: int) -> Callable[[], bool]:
    def check() -> bool:
        requests = list(backend.state.requests)  # type: ignore[attr-defined]
        return sum(1 for m, path, _ in requests if m == "GET" and job_id in path) >= times
    return check


def _cancels(backend: object) -> int:
    return sum(1 for m, path, _ in list(backend.state.requests) if m == "POST" and path.endswith("/cancel"))  # type: ignore[attr-defined]


@pytest.fixture()
def running_job(fake_backend, tmp_path: Path) -> str:  # type: ignore[no-untyped-def]
    fake_backend.state.hang = True
    (tmp_path / "sft.toml").write_text(MINIMAL_SFT)
    (tmp_path / "train.jsonl").write_text(GOOD_LINE * 3)
    done = _cli(["train", "sft.toml", "--backend", fake_backend.url, "--no-poll"], tmp_path, fake_backend)
    assert done.returncode == 0, done.stderr
    job_id = done.stdout.strip().splitlines()[-1]
    assert fake_backend.state.jobs[job_id].status == "running"
    return job_id


@pytest.mark.parametrize("command", [["attach", "{job}"], ["train", "--attach", "{job}"]],
                         ids=["attach", "train-attach"])
def test_ctrl_c_on_a_watched_job_detaches_and_leaves_it_running(command: list[str], running_job: str, fake_backend,
                                                               tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    args = [word.format(job=running_job) for word in command] + ["--backend", fake_backend.url,
                                                                  "--poll-interval", "0.5"]
    proc = subprocess.Popen([sys.executable, "-m", "synth_nb", *args], cwd=tmp_path, env=_env(fake_backend),
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with killed_at_exit(proc):
        seen, deadline = _polled(fake_backend, running_job, 3), time.monotonic() + HANG
        while not seen():
            assert proc.poll() is None, f"the command ended early: {proc.communicate()}"
            assert time.monotonic() < deadline, "the command never followed the job"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=HANG)
    assert_ended_by_ctrl_c(proc, out, err, fake_backend.api_key)
    assert f"stopped watching job {running_job}; it keeps running" in err
    assert f"synth-nb cancel {running_job}" in err
    assert _cancels(fake_backend) == 0
    assert fake_backend.state.jobs[running_job].status == "running"


def test_cancel_asks_the_backend_and_says_how_the_job_ended(running_job: str, fake_backend,
                                                            tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    done = _cli(["cancel", running_job, "--backend", fake_backend.url], tmp_path, fake_backend)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"job {running_job}: cancelled"
    assert _cancels(fake_backend) == 1 and fake_backend.state.jobs[running_job].status == "cancelled"
    assert fake_backend.api_key not in done.stdout + done.stderr
