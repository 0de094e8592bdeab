"""Ctrl-C at every stage of ``synth-nb train``: exit 130, no traceback, and the backend is left with at most
one job, cancelled.

Each case runs the real command in a subprocess against the in-test backend (``fake_backend``), which can
hold a request for a while (``state.delays``) so that the interrupt lands while that request is in flight.
The subprocess gets a generous deadline only so that a hang fails the test instead of blocking the suite;
how long an interrupt may take is bounded by ``synth_nb.job.interrupt.INTERRUPT_GRACE``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from minimal_configs import MINIMAL_SFT
from shared_fixtures import assert_ended_by_ctrl_c, killed_at_exit

#: far above what an interrupt takes (a few seconds); reached only when something hangs
HANG = 60.0
GOOD_LINE = '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n'


def _seen(backend: object, method: str, ending: str, times: int = 1) -> Callable[[], bool]:
    def check() -> bool:
        requests = backend.state.requests  # type: ignore[attr-defined]
        return sum(1 for m, path, _ in list(requests) if m == method and path.endswith(ending)) >= times
    return check


def _running(backend: object, polls: int = 0) -> Callable[[], bool]:
    def check() -> bool:
        state = backend.state  # type: ignore[attr-defined]
        if not any(job.status == "running" for job in list(state.jobs.values())):
            return False
        return sum(1 for m, path, _ in list(state.requests) if m == "GET" and "/learning/jobs/" in path) >= polls
    return check


@dataclass(frozen=True)
class Point:
    """Where the interrupt lands: what the backend holds back, and what it must have seen first."""

    name: str
    trigger: Callable[[object], Callable[[], bool]]
    delays: dict[str, float] = field(default_factory=dict)
    #: a second Ctrl-C once this holds (None: one Ctrl-C)
    again: Callable[[object], Callable[[], bool]] | None = None
    jobs: int = 1


POINTS = [
    Point("during-upload", lambda b: _seen(b, "POST", "/api/files"), {"upload": 3.0}, jobs=0),
    Point("create-in-flight", lambda b: _seen(b, "POST", "/api/learning/jobs"), {"create": 2.0}),
    Point("create-answer-pending", lambda b: lambda: bool(b.state.jobs), {"created": 2.0}),  # type: ignore[attr-defined]
    Point("start-in-flight", lambda b: _seen(b, "POST", "/start"), {"start": 2.0}),
    Point("as-following-starts", lambda b: _running(b)),
    Point("while-following", lambda b: _running(b, polls=3)),
    Point("later-while-following", lambda b: _running(b, polls=8)),
    Point("during-cancel", lambda b: _running(b, polls=2), {"cancel": 3.0}, again=lambda b: _seen(b, "POST", "/cancel")),
]


def _wait(predicate: Callable[[], bool], proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + HANG
    while not predicate():
        assert proc.poll() is None, f"the command ended early: {proc.communicate()}"
        assert time.monotonic() < deadline, "the command never reached the point to interrupt"
        time.sleep(0.02)


@pytest.mark.parametrize("point", POINTS, ids=[p.name for p in POINTS])
def test_ctrl_c_exits_130_and_leaves_at_most_one_job_cancelled(point: Point, fake_backend, tmp_path: Path) -> None:
    fake_backend.state.hang = True
    fake_backend.state.delays.update(point.delays)
    (tmp_path / "sft.toml").write_text(MINIMAL_SFT)
    (tmp_path / "train.jsonl").write_text(GOOD_LINE * 3)
    env = {**os.environ, "SYNTH_API_KEY": fake_backend.api_key, "PYTHONUNBUFFERED": "1"}
    env.pop("SYNTH_BACKEND_OVERRIDE", None)
    proc = subprocess.Popen([sys.executable, "-m", "synth_nb", "train", "--config", "sft.toml", "--backend",
                             fake_backend.url, "--poll-interval", "0.5"], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with killed_at_exit(proc):
        _wait(point.trigger(fake_backend), proc)
        proc.send_signal(signal.SIGINT)
        if point.again is not None:
            _wait(point.again(fake_backend), proc)
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=HANG)
    assert_ended_by_ctrl_c(proc, out, err, fake_backend.api_key)
    jobs = list(fake_backend.state.jobs.values())
    assert len(jobs) == point.jobs, [j.id for j in jobs]
    deadline = time.monotonic() + HANG  # a cancel held back by the backend lands after the command left
    while any(j.status != "cancelled" for j in jobs) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(j.status == "cancelled" for j in jobs), [(j.id, j.status) for j in jobs]
