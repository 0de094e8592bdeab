"""A Job moves between event loops with ``rebind`` (history kept) and says so when its client is closed."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from synth_nb.client import AsyncSynthClient
from synth_nb.errors import ClientClosedError, ClientError
from synth_nb.flows import get_flow
from synth_nb.job import Job, JobUpdate, JobView

ENDLESS = {"events": 100_000, "interval": 0.01}


@pytest.fixture
def thread_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in another thread, like a notebook's background loop."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    loop.close()


async def _create(fake_backend, client: AsyncSynthClient) -> str:
    created = await client.create_job(fake_backend.endpoints("rl"), {"metadata": {"fake": dict(ENDLESS)}})
    return str(created["job_id"])


async def _follow_a_little(job: Job, events: int = 3) -> None:
    job.start_monitoring()
    while len(job.events) < events:
        await asyncio.sleep(0.01)


async def _followed_job(fake_backend) -> Job:  # type: ignore[no-untyped-def]
    """A new RL job on the in-test backend, followed for a few events on the running loop."""
    client = AsyncSynthClient(fake_backend.url, fake_backend.api_key)
    job = Job(await _create(fake_backend, client), "rl", client, endpoints=get_flow("rl").endpoints, poll_interval=0.2)
    await _follow_a_little(job)
    return job


def test_a_job_keeps_its_history_and_finishes_on_a_second_loop(fake_backend) -> None:
    async def first() -> tuple[Job, AsyncSynthClient]:
        client = AsyncSynthClient(fake_backend.url, fake_backend.api_key)
        job = Job(await _create(fake_backend, client), "rl", client,
                  endpoints=get_flow("rl").endpoints, poll_interval=0.2)
        await _follow_a_little(job)
        await job.stop_monitoring()
        await client.aclose()
        return job, client

    job, old = asyncio.run(first())
    before = [e.seq for e in job.events]
    assert job.loop is not None and job.loop.is_closed()

    async def second() -> str:
        job.rebind(old.clone())
        assert job.loop is None
        updates: list[JobUpdate] = []
        job.add_listener(updates.append)
        fake_backend.job(job.id).body["metadata"]["fake"]["stop"] = True  # let the job end now
        status = await job.wait(timeout=60)
        assert job.loop is asyncio.get_running_loop()
        await job.client.aclose()
        assert [u.event.seq for u in updates if u.event is not None] == [e.seq for e in job.events][len(before):]
        return status

    assert asyncio.run(second()) == "succeeded"
    assert [e.seq for e in job.events][: len(before)] == before
    assert [e.seq for e in job.events] == [e["seq"] for e in fake_backend.job(job.id).events]
    assert job.done and job.events[-1].type == "rl.job.completed"


def test_rebind_stops_the_monitor_on_the_other_loop_and_the_new_loop_can_cancel(fake_backend, thread_loop) -> None:
    def on_thread(coro):  # type: ignore[no-untyped-def]
        return asyncio.run_coroutine_threadsafe(coro, thread_loop).result(60)

    async def monitors_running() -> list[str]:
        return [t.get_name() for t in asyncio.all_tasks() if t.get_name().startswith("synth-nb:")]

    job = on_thread(_followed_job(fake_backend))
    assert job.loop is thread_loop
    old = job.client

    async def here() -> str:
        job.rebind(old.clone())  # the old loop is still following it
        status = await job.cancel()
        await job.client.aclose()
        return status

    assert asyncio.run(here()) == "cancelled"
    assert on_thread(monitors_running()) == []
    on_thread(old.aclose())
    assert job.done and job.events[-1].type == "job.cancelled"
    seqs = [e.seq for e in job.events]
    assert seqs == sorted(set(seqs)) == [e["seq"] for e in fake_backend.job(job.id).events]


def test_waiting_from_another_loop_than_the_monitor_works(fake_backend, thread_loop) -> None:
    """A cell's loop may await a job followed on the background loop: the done signal crosses loops."""
    job = asyncio.run_coroutine_threadsafe(_followed_job(fake_backend), thread_loop).result(60)

    async def here() -> tuple[str, list[str]]:
        kinds = asyncio.ensure_future(_kinds(job))
        fake_backend.job(job.id).body["metadata"]["fake"]["stop"] = True
        return await job.wait(timeout=60), await asyncio.wait_for(kinds, 60)

    status, kinds = asyncio.run(here())
    asyncio.run_coroutine_threadsafe(job.client.aclose(), thread_loop).result(60)
    assert status == "succeeded" and kinds[-1] == "done"
    assert kinds.count("event") == len(job.events)


async def _kinds(job: Job) -> list[str]:
    return [u.kind async for u in job.updates()]


def test_a_job_whose_client_was_closed_says_how_to_get_a_live_handle(fake_backend) -> None:
    async def run() -> Job:
        async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
            job = Job(await _create(fake_backend, client), "rl", client,
                      endpoints=get_flow("rl").endpoints, poll_interval=0.2)
            await _follow_a_little(job)
            await job.stop_monitoring()
        for action in (job.wait(timeout=30), job.cancel(), job.refresh()):
            with pytest.raises(ClientClosedError) as info:
                await action
            text = str(info.value)
            assert f"%synth_train --attach {job.id}" in text and f"synth-nb attach {job.id}" in text
            assert info.value.job_id == job.id and isinstance(info.value, ClientError)
            assert fake_backend.api_key not in text
        return job

    job = asyncio.run(run())
    assert not job.done and len(job.events) >= 3  # the history is still there to read
    assert list(job.events_df()["seq"]) == [e.seq for e in job.events]


def test_a_monitor_whose_client_closes_underneath_fails_with_the_job_id(fake_backend) -> None:
    async def run() -> None:
        client = AsyncSynthClient(fake_backend.url, fake_backend.api_key)
        job = Job(await _create(fake_backend, client), "rl", client,
                  endpoints=get_flow("rl").endpoints, poll_interval=0.05)
        await _follow_a_little(job)
        await client.aclose()
        with pytest.raises(ClientClosedError, match=f"job {job.id}: its client"):
            await job.wait(timeout=60)
        job.rebind(client.clone())  # a new connection resumes a job the old one could not finish
        assert not job.done
        assert await job.cancel() == "cancelled"
        await job.client.aclose()

    asyncio.run(run())


def test_job_is_a_job_view() -> None:
    job: JobView = Job("job_1", "rl", AsyncSynthClient("http://127.0.0.1:9", "k"),
                       endpoints=get_flow("rl").endpoints)
    assert isinstance(job, JobView)
