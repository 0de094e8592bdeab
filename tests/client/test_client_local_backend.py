"""The client and job monitor against the real local backend (synth_nb.local.start_backend) over HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from synth_nb import local
from synth_nb.client import AsyncSynthClient
from synth_nb.errors import AuthError, NotFoundError, ValidationError
from synth_nb.flows import get_flow, guess_flow
from synth_nb.job import Job, attach

RL = get_flow("rl").endpoints


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[object]:
    with local.start_backend(port=0, data_dir=tmp_path / "backend") as running:
        yield running


def _replay_file(data_dir: Path, name: str) -> Path:
    """Where a backend on ``data_dir`` lets a replay read a recording from."""
    folder = data_dir / "recordings"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def _replay_body(flow: str, recording: str | Path, speed: float = 50.0) -> dict:
    body: dict = {"metadata": {"local_executor": "replay", "recording": str(recording), "replay_speed": speed}}
    if flow == "prompt_learning":
        body["algorithm"] = "gepa"
    return body


@pytest.mark.parametrize(("flow", "recording"), [("sft", "sft"), ("rl", "rl"), ("prompt_learning", "gepa")])
async def test_every_flow_streams_to_a_terminal_state(backend, flow: str, recording: str) -> None:
    endpoints = get_flow(flow).endpoints
    async with AsyncSynthClient(backend.url, backend.api_key) as client:
        # a ~6 s replay: long enough for the event stream to connect before the job ends, even on a loaded
        # machine (a job that ends first is drained by polling, and its stream never decides on SSE)
        created = await client.create_job(endpoints, _replay_body(flow, recording, speed=4.0))
        job_id = created.get("job_id") or created["id"]
        await client.start(endpoints, job_id)  # SFT jobs wait for it; the other flows have no start path
        job = Job(job_id, flow, client, endpoints=endpoints, poll_interval=0.5)
        assert await job.wait(timeout=60) == "succeeded"
        everything = await client.get_events(endpoints, job_id, limit=10000)
        assert [e.seq for e in job.events] == [e.seq for e in everything]
        assert job.stream_mode == "sse"
        assert job.metrics
        phases = [entry.get("phase") for entry in job.timeline]
        if endpoints.timeline:  # SFT and RL keep one, as the hosted backend does; prompt learning has none
            assert phases[-1] == "succeeded" and phases == [e["phase"] for e in await client.get_timeline(endpoints, job_id)]
        else:
            assert phases == [] and await client.get_timeline(endpoints, job_id) == []


async def test_attach_rebuilds_the_full_history(backend) -> None:
    async with AsyncSynthClient(backend.url, backend.api_key) as client:
        created = await client.create_job(RL, _replay_body("rl", "rl"))
        job_id = created.get("job_id") or created["id"]
        first = Job(job_id, "rl", client, endpoints=RL, poll_interval=0.5)
        await first.wait(timeout=60)
        every_flow = {name: get_flow(name).endpoints for name in guess_flow(job_id)}
        again = await attach(job_id, client, every_flow)  # the flow is found by probing its status path
    assert again.flow == "rl" and again.done and again.status == "succeeded"
    assert [e.seq for e in again.events] == [e.seq for e in first.events]
    assert sorted((m.name, m.step) for m in again.metrics) == sorted((m.name, m.step) for m in first.metrics)


async def test_cancel_against_the_local_backend(backend) -> None:
    async with AsyncSynthClient(backend.url, backend.api_key) as client:
        created = await client.create_job(RL, _replay_body("rl", "rl", speed=0.5))
        job = Job(created.get("job_id") or created["id"], "rl", client,
                  endpoints=RL, poll_interval=0.2)
        job.start_monitoring()
        while not job.events:
            await asyncio.sleep(0.02)
        assert await job.cancel() == "cancelled"
        assert job.done


async def test_backend_errors_map_to_the_hierarchy(backend) -> None:
    async with AsyncSynthClient(backend.url, "sk_wrong_but_long_enough_1234") as client:
        with pytest.raises(AuthError):
            await client.get_status(RL, "job_x")
    async with AsyncSynthClient(backend.url, backend.api_key) as client:
        with pytest.raises(NotFoundError):
            await client.get_status(get_flow("sft").endpoints, "job_does_not_exist")
        with pytest.raises(ValidationError, match="replay_speed"):
            await client.create_job(RL, {"metadata": {"local_executor": "replay", "replay_speed": -1}})


@pytest.mark.parametrize(("sse", "faults"), [(True, 40), (False, 100)], ids=["sse", "polling"])
async def test_faults_against_the_local_backend_lose_and_duplicate_nothing(
    backend, no_backoff, faulty_transport, tmp_path: Path, sse: bool, faults: int
) -> None:
    """Faults until ``faults`` were injected, then a cancel (also through the faults); compare with the truth."""
    recording = _replay_file(tmp_path / "backend", "long.jsonl")
    lines = [{"t": 0, "kind": "meta", "payload": {"flow": "rl"}},
             {"t": 0, "kind": "status", "payload": {"status": "running"}}]
    for i in range(5000):
        lines.append({"t": i * 0.003, "kind": "event", "payload": {"type": "rl.train.step", "message": f"step {i}",
                                                                     "data": {"step": i}}})
        lines.append({"t": i * 0.003, "kind": "metric",
                      "payload": {"name": "train.reward", "step": i, "value": i / 5000}})
    recording.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    transport = faulty_transport(rate=0.45, seed=3)
    async with AsyncSynthClient(backend.url, backend.api_key, transport=transport) as client:
        created = await client.create_job(RL, _replay_body("rl", recording, speed=1.0), idempotency_key="once")
        job = Job(created.get("job_id") or created["id"], "rl", client,
                  endpoints=RL, poll_interval=0.02, min_interval=0.001,
                  use_sse=sse)
        job.start_monitoring()
        while transport.total < faults:
            await asyncio.sleep(0.02)
        assert await job.cancel(timeout=60) == "cancelled"  # the cancel itself goes through the faults too
        assert await job.wait(timeout=60) == "cancelled"
    async with AsyncSynthClient(backend.url, backend.api_key) as clean:
        truth = await clean.get_events(RL, job.id, limit=10000)
        points = await clean.get_metrics(RL, job.id, limit=10000)
        jobs = await clean.list_jobs(RL, limit=100)
    assert transport.total >= faults
    assert len(truth) > 50
    assert [e.seq for e in job.events] == [e.seq for e in truth]
    assert sorted((m.name, m.step) for m in job.metrics) == sorted((p.name, p.step) for p in points)
    assert len(jobs) == 1


async def test_killing_the_backend_mid_job_loses_and_duplicates_nothing(tmp_path: Path, no_backoff) -> None:
    """The server dies mid-job and comes back on the same port and data: the client catches up exactly."""
    data_dir = tmp_path / "backend"
    first = local.start_backend(port=0, data_dir=data_dir, api_key="sk_restart_test_0123456789")
    port = int(first.url.rsplit(":", 1)[1])
    recording = _replay_file(data_dir, "slow.jsonl")
    lines = [{"t": 0, "kind": "meta", "payload": {"flow": "rl"}}]
    lines += [{"t": i * 0.02, "kind": "event", "payload": {"type": "rl.train.step", "message": f"step {i}"}}
              for i in range(500)]
    recording.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    second = None
    try:
        async with AsyncSynthClient(first.url, first.api_key, max_attempts=3) as client:
            created = await client.create_job(RL, _replay_body("rl", recording, speed=1.0))
            job = Job(created.get("job_id") or created["id"], "rl", client,
                      endpoints=RL, poll_interval=0.1)
            job.start_monitoring()
            while len(job.events) < 20:
                await asyncio.sleep(0.02)
            await asyncio.to_thread(first.stop)
            await asyncio.sleep(0.5)  # the client now sees refused connections
            second = await asyncio.to_thread(local.start_backend, port=port, data_dir=data_dir,
                                             api_key="sk_restart_test_0123456789")
            assert await job.wait(timeout=60) == "failed"  # running jobs end failed when the server died
            truth = await client.get_events(RL, job.id, limit=10000)
    finally:
        first.stop()
        if second is not None:
            second.stop()
    assert [e.seq for e in job.events] == [e.seq for e in truth]
    failed = next(e for e in reversed(job.events) if e.type == "rl.job.failed")
    assert "stopped" in failed.message and job.events[-1].type == "learning.policy.rl.job.failed"


async def test_a_drain_asks_for_the_next_page_at_the_cursor_the_backend_states(tmp_path: Path, monkeypatch) -> None:
    """The embedded backend's page ends with its ``next_seq``: the next page is asked for before this one is read,
    at the cursor a one-page-at-a-time reader would ask at, each once."""
    from synth_nb.client import EventStream, _client, _stream
    from synth_nb.local.storage import Storage

    storage = Storage(tmp_path / "backend")
    storage.create_job("job_drain", "rl", "replay", {"metadata": {"local_executor": "replay"}})
    for step in range(34):
        storage.add_event("job_drain", "rl.train.step", f"step {step}", {"step": step})
    storage.close()
    monkeypatch.setattr(_stream, "DRAIN_PAGE", 10)
    seen: list[tuple[str, int]] = []
    parse = _client.parse_event_records
    monkeypatch.setattr(_client, "parse_event_records",
                        lambda raw, since, numbering: seen.append(("read", since)) or parse(raw, since, numbering))
    with local.start_backend(port=0, data_dir=tmp_path / "backend") as running:
        async with AsyncSynthClient(running.url, running.api_key) as client:
            fetch = client.get_event_records

            async def recorded(endpoints, job_id, since_seq=0, limit=200, **kw):  # type: ignore[no-untyped-def]
                seen.append(("asked", since_seq))
                return await fetch(endpoints, job_id, since_seq=since_seq, limit=limit, **kw)

            client.get_event_records = recorded  # type: ignore[method-assign]
            stream = EventStream(client, RL, "job_drain", use_sse=False)
            stream.limit = 10
            got: list = []
            count = await stream.drain(got.append)
    seqs = [e.seq for e in got]
    assert count == len(seqs) > 30 and seqs == sorted(set(seqs))
    cursors = [0, *seqs[9::10], *([seqs[-1]] if len(seqs) % 10 else [])]
    assert [since for what, since in seen if what == "asked"] == cursors
    assert seen[:4] == [("asked", 0), ("asked", cursors[1]), ("read", 0), ("asked", cursors[2])]
