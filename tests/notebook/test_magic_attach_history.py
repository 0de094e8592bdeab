"""``%synth_train --attach JOB_ID`` shows the job's panel (its newest events); ``--all-events`` also prints
every event of the history in the cell, as the CLI's flag of the same name does."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow

EVENTS = 40


def _finished(fake_backend: Any) -> str:
    async def create() -> str:
        async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
            created = await client.create_job(get_flow("rl").endpoints, {"metadata": {"fake": {"events": EVENTS}}})
            while fake_backend.job(created["job_id"]).status != "succeeded":
                await asyncio.sleep(0.01)
            return str(created["job_id"])

    return asyncio.run(create())


def _steps(out: str) -> list[int]:
    return [int(m) for m in re.findall(r"rl\.progress.*step (\d+)$", out, flags=re.MULTILINE)]


@pytest.mark.parametrize("flag", ["", " --all-events"])
def test_attach_prints_the_whole_history_only_with_all_events(
        ip: Any, project: Path, fake_backend: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], flag: str) -> None:
    job_id = _finished(fake_backend)
    monkeypatch.setenv("SYNTH_API_KEY", fake_backend.api_key)
    job = ip.run_line_magic("synth_train", f"--attach {job_id} --backend {fake_backend.url}{flag}")
    out = capsys.readouterr().out
    assert job.status == "succeeded" and len(job.events) == EVENTS + 3
    steps = _steps(out)
    if flag:
        assert sorted(set(steps)) == list(range(EVENTS))
    else:
        assert steps and 0 not in steps and max(steps) == EVENTS - 1  # the panel's newest few
