"""Hostile shapes are bounded: an answer too large or nested too deep is one line naming the URL, exit 1; an
answer that drips or a history that never ends is given up at ``--poll-timeout`` and said; no traceback.

The memory each bound keeps is measured in ``benchmarks/hostile_answers.py`` (peak RSS of the real CLI).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hostile_backend import (
    Body,
    HostileBackend,
    HostileJob,
    drip_body,
    good_id,
    good_job,
    huge_body,
    nested_body,
)
from hostile_sandbox import Tree, assert_clean, synth_nb

from synth_nb.client import AsyncSynthClient, EventStream, PlainClient
from synth_nb.errors import BackendAnswerError
from synth_nb.flows import get_flow


def _attach(hostile: HostileBackend, work: Path, job: HostileJob, *flags: str):
    hostile.add(job)
    return synth_nb(work, "attach", job.id, "--backend", hostile.url, "--flow", "prompt_learning", *flags)


@pytest.mark.parametrize("shape", ["status", "events", "metrics"])
def test_an_answer_nested_200000_levels_is_one_line_and_exit_1(shape: str, hostile: HostileBackend, work: Path,
                                                               tree: Tree) -> None:
    job = good_job()
    setattr(job, f"{shape}_body", nested_body(200_000))
    ran = _attach(hostile, work, job)
    assert ran.code == 1, ran.text
    assert_clean(ran)
    [line] = ran.error_lines()
    assert "nested deeper than 64 levels" in line and hostile.url in line
    assert tree.changed_outside(work) == []


@pytest.mark.parametrize("declared", [False, True], ids=["streamed", "declared"])
def test_a_200_mib_status_is_refused_past_64_mib_naming_the_url(declared: bool, hostile: HostileBackend,
                                                                work: Path) -> None:
    job = HostileJob(good_id(), status_body=huge_body(200, declared=declared))
    ran = _attach(hostile, work, job)
    assert ran.code == 1, ran.text
    assert_clean(ran)
    [line] = ran.error_lines()
    assert "64 MiB" in line and f"{hostile.url}/api/prompt-learning/online/jobs/{job.id}" in line


@pytest.mark.parametrize("body", [nested_body(200_000), huge_body(200), huge_body(200, declared=True)],
                         ids=["deep", "streamed", "declared"])
def test_the_plain_client_of_cancel_refuses_the_same_answers(body: Body, hostile: HostileBackend) -> None:
    """``synth-nb cancel``'s client (the standard library's HTTP client) keeps the bounds of httpx's: the same
    one-line refusal naming the URL."""
    job = hostile.add(HostileJob(good_id(), status_body=body))
    client = PlainClient(hostile.url, hostile.api_key)
    with pytest.raises(BackendAnswerError) as refused:
        client.get_status(get_flow("prompt_learning").endpoints, job.id)
    line = str(refused.value)
    assert "nested deeper than 64 levels" in line or "64 MiB" in line
    assert f"GET {hostile.url}/api/prompt-learning/online/jobs/{job.id}" in line and "\n" not in line


@pytest.mark.parametrize("body", [nested_body(100_000), huge_body(80)], ids=["deep", "huge"])
def test_a_create_answer_out_of_bounds_is_one_line_and_nothing_is_written(
        body: Body, hostile: HostileBackend, work: Path, tree: Tree) -> None:
    job = good_job()
    job.create_body = body
    hostile.plan(job)
    ran = synth_nb(work, "train", "cfg.toml", "--backend", hostile.url, "--yes", "--poll-timeout", "60")
    assert ran.code == 1, ran.text
    assert_clean(ran)
    [line] = ran.error_lines()
    assert "POST " in line and ("nested deeper than 64 levels" in line or "64 MiB" in line)
    assert tree.changed_outside(work) == [] and not (work / "results").exists()


def test_an_events_answer_that_drips_ends_attach_at_its_poll_timeout(hostile: HostileBackend, work: Path) -> None:
    job = HostileJob(good_id(), {"status": "running"}, events_body=drip_body(every=1.0))
    ran = _attach(hostile, work, job, "--poll-timeout", "4")
    assert ran.code == 1, ran.text
    assert_clean(ran)
    [line] = ran.error_lines()
    assert f"job {job.id}: the backend has not finished its answer after 4s (--poll-timeout)" in line


def test_a_history_that_never_ends_is_said_and_ends_at_the_poll_timeout(hostile: HostileBackend, work: Path) -> None:
    job = HostileJob(good_id(), {"status": "succeeded"}, endless_events=5000)
    ran = _attach(hostile, work, job, "--poll-timeout", "6")
    assert ran.code == 1, ran.text
    assert_clean(ran)
    [line] = ran.error_lines()
    assert "the backend keeps sending new history: " in line and "events so far after 6s (--poll-timeout)" in line


def test_a_drained_history_is_capped(hostile: HostileBackend) -> None:
    job = hostile.add(HostileJob(good_id(), {"status": "succeeded"}, endless_events=5000))

    async def drain() -> int:
        async with AsyncSynthClient(hostile.url, hostile.api_key) as client:
            stream = EventStream(client, get_flow("prompt_learning").endpoints, job.id)
            stream.history_cap = 20_000
            return await stream.drain(lambda _event: None)

    with pytest.raises(BackendAnswerError, match="keeps sending new history: 20,000 events so far; stopped reading"):
        asyncio.run(drain())
