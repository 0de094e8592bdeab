"""What `synth-nb attach` prints of a finished job's history: by default how many events came earlier and
the newest lines; with --all-events every line. New events of a running job are printed as they come."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from synth_nb.cli.main import main as cli_main
from synth_nb.cli.printer import HISTORY_NEWEST
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.pipeline.flags import build_train_parser

EVENTS = 60


def main(argv: list[str]) -> int:
    """``synth-nb attach ARGV`` through the CLI's entry point."""
    return cli_main(["attach", *argv])


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SYNTH_BACKEND_OVERRIDE", raising=False)


def _job(fake_backend, spec: dict) -> str:
    async def create() -> str:
        async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
            created = await client.create_job(get_flow("rl").endpoints, {"metadata": {"fake": spec}})
            return str(created["job_id"])

    return asyncio.run(create())


def _finished(fake_backend) -> str:
    job_id = _job(fake_backend, {"events": EVENTS})

    async def ended() -> None:
        while fake_backend.job(job_id).status != "succeeded":
            await asyncio.sleep(0.01)

    asyncio.run(ended())
    return job_id


def _steps(out: str) -> list[int]:
    return [int(m) for m in re.findall(r"rl\.progress: step (\d+)$", out, flags=re.MULTILINE)]


def test_attach_prints_how_many_events_came_earlier_and_the_newest_lines(
        fake_backend, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    job_id = _finished(fake_backend)
    monkeypatch.setenv("SYNTH_API_KEY", fake_backend.api_key)
    assert main([job_id, "--backend", fake_backend.url]) == 0
    out = capsys.readouterr().out
    total = EVENTS + 3  # created, started, the steps, completed
    earlier = total - HISTORY_NEWEST
    assert f"… {earlier} earlier events; --all-events to print every one" in out
    assert _steps(out) == list(range(EVENTS - HISTORY_NEWEST + 1, EVENTS))  # the newest, completed the last
    assert re.search(rf"\[{total}\] rl\.job\.completed: job succeeded$", out, flags=re.MULTILINE)
    assert f"events:   {total}" in out  # the final block still counts every one


def test_attach_all_events_prints_every_line(fake_backend, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture) -> None:
    job_id = _finished(fake_backend)
    monkeypatch.setenv("SYNTH_API_KEY", fake_backend.api_key)
    assert main([job_id, "--backend", fake_backend.url, "--all-events"]) == 0
    out = capsys.readouterr().out
    assert "earlier events" not in out
    assert _steps(out) == list(range(EVENTS))
    assert "rl.started: started" in out and "[1] rl.created" in out


def test_a_running_job_attached_prints_each_new_event_as_it_comes(
        fake_backend, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    job_id = _job(fake_backend, {"events": EVENTS, "interval": 0.02})  # a line every 20 ms: mostly live
    monkeypatch.setenv("SYNTH_API_KEY", fake_backend.api_key)
    assert main([job_id, "--backend", fake_backend.url, "--stream-format", "cli"]) == 0
    out = capsys.readouterr().out
    steps = _steps(out)
    assert steps == list(range(steps[0], EVENTS))  # from where the history's tail began, none skipped
    assert steps[0] <= EVENTS - HISTORY_NEWEST


def test_all_events_is_one_train_flag_too() -> None:
    assert build_train_parser().parse_args(["--attach", "job_1", "--all-events"]).all_events is True
