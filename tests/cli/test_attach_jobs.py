"""`synth-nb attach JOB_ID` and `synth-nb jobs` through the real CLI entry point."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import pytest

from synth_nb.cli import attach, jobs
from synth_nb.client import AsyncSynthClient
from synth_nb.errors import SynthNbError
from synth_nb.flows import get_flow
from synth_nb.job import JobRecord, JobRegistry


def main(argv: list[str]) -> int:
    """What ``synth_nb.cli.main.main`` does for these two sub-commands (parse, run, map errors)."""
    module = {"attach": attach, "jobs": jobs}[argv[0]]
    parser = argparse.ArgumentParser(prog=f"synth-nb {argv[0]}")
    module.configure(parser)
    try:
        return module.run(parser.parse_args(argv[1:]))
    except SynthNbError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SYNTH_API_KEY", raising=False)
    monkeypatch.delenv("SYNTH_BACKEND_OVERRIDE", raising=False)


def _finished_job(fake_backend) -> str:
    async def create() -> str:
        async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
            created = await client.create_job(get_flow("rl").endpoints, {"metadata": {"fake": {"events": 5}}})
            while fake_backend.job(created["job_id"]).status != "succeeded":
                await asyncio.sleep(0.01)
            return str(created["job_id"])

    return asyncio.run(create())


def test_attach_prints_the_whole_history_and_exits_0(fake_backend, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    job_id = _finished_job(fake_backend)
    env = tmp_path / ".env"
    env.write_text(f"SYNTH_API_KEY={fake_backend.api_key}\n")
    code = main(["attach", job_id, "--backend", fake_backend.url, "--env-file", str(env)])
    out = capsys.readouterr().out
    assert code == 0
    assert f"attached to rl job {job_id}" in out
    assert "[1] rl.created" in out and "rl.job.completed" in out
    assert "Final status: succeeded" in out


def test_attach_uses_the_registry_backend(fake_backend, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture) -> None:
    job_id = _finished_job(fake_backend)
    JobRegistry().record(JobRecord(job_id, "rl", f"{fake_backend.url}/api"))
    monkeypatch.setenv("SYNTH_API_KEY", fake_backend.api_key)
    assert main(["attach", job_id]) == 0
    assert "Final status: succeeded" in capsys.readouterr().out


def test_attach_without_key_is_a_secrets_error(capsys: pytest.CaptureFixture) -> None:
    assert main(["attach", "job_1", "--backend", "http://127.0.0.1:9"]) == 2
    assert "SYNTH_API_KEY" in capsys.readouterr().err


def test_attach_unknown_job_exits_1(fake_backend, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("SYNTH_API_KEY", fake_backend.api_key)
    assert main(["attach", "job_nope", "--backend", fake_backend.url]) == 1
    assert "job_nope was not found" in capsys.readouterr().err


def test_jobs_lists_the_registry(capsys: pytest.CaptureFixture) -> None:
    assert main(["jobs"]) == 0
    assert "no jobs recorded" in capsys.readouterr().out
    JobRegistry().record(JobRecord("job_abc", "prompt_learning", "http://h/api", algorithm="gepa", last_seq=7))
    assert main(["jobs"]) == 0
    out = capsys.readouterr().out
    assert "job_abc" in out and "prompt_learning/gepa" in out and "synth-nb attach" in out
    assert main(["jobs", "--json"]) == 0
    assert '"job_id": "job_abc"' in capsys.readouterr().out


def test_attach_of_a_job_this_folder_never_sent_says_so_without_asking_any_backend(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Without --backend there is nowhere to look: the hosted default would only answer with a DNS error."""
    (tmp_path / ".env").write_text("SYNTH_API_KEY=sk_synth_attach_unknown_0000\n")
    assert main(["attach", "job_nope"]) == 2
    err = capsys.readouterr().err
    assert "job job_nope is not in this folder's jobs" in err and "--backend URL" in err
    assert err.count("error:") == 1 and "Traceback" not in err


def test_jobs_asks_each_backend_for_the_status_of_jobs_not_recorded_as_ended(
        fake_backend, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """A job recorded as running that has since finished is shown finished; a backend that cannot be
    reached leaves its jobs' recorded status, marked and explained in one note."""
    job_id = _finished_job(fake_backend)
    registry = JobRegistry()
    registry.record(JobRecord(job_id, "rl", f"{fake_backend.url}/api", status="running"))
    registry.record(JobRecord("job_gone", "rl", "http://127.0.0.1:9/api", status="running"))
    monkeypatch.setenv("SYNTH_API_KEY", fake_backend.api_key)
    assert main(["jobs"]) == 0
    out = capsys.readouterr().out
    (finished,) = [line for line in out.splitlines() if line.startswith(job_id)]
    (gone,) = [line for line in out.splitlines() if line.startswith("job_gone")]
    assert " succeeded " in finished and "running" not in finished
    assert " running (recorded) " in gone
    assert "status marked (recorded) is the last one seen: http://127.0.0.1:9/api did not answer" in out
    assert registry.get(job_id).status == "succeeded"  # remembered for the next listing
    assert registry.get("job_gone").status == "running"
