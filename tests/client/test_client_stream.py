"""EventStream: SSE when offered, polling fallback, resume from the cursor, adaptive interval."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from collections import Counter

import httpx
import pytest

from synth_nb.client import AsyncSynthClient, EventStream
from synth_nb.contract import FlowEndpoints

#: RL paths with an event stream, for tests that answer with a MockTransport
RL = FlowEndpoints(create="/rl/jobs", status="/rl/jobs/{job_id}", events="/rl/jobs/{job_id}/events",
                   metrics="/rl/jobs/{job_id}/metrics", cancel="/rl/jobs/{job_id}/cancel",
                   events_stream="/rl/jobs/{job_id}/events/stream")


async def _job(client: AsyncSynthClient, fake: dict) -> str:
    created = await client.create_job(RL, {"metadata": {"fake": fake}})
    return str(created["job_id"])


async def test_sse_is_used_when_the_backend_offers_it(fake_backend) -> None:
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        job_id = await _job(client, {"events": 50})
        stream = EventStream(client, RL, job_id)
        seqs = [e.seq async for e in stream]
    assert seqs == [e["seq"] for e in fake_backend.job(job_id).events]
    assert stream.mode == "sse"
    stream_calls = [h for _m, p, h in fake_backend.state.requests if p.endswith("/events/stream")]
    assert stream_calls and stream_calls[0]["accept"] == "text/event-stream"


async def test_falls_back_to_polling_when_the_stream_404s(fake_backend) -> None:
    fake_backend.state.sse = False
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        job_id = await _job(client, {"events": 30, "interval": 0.002})
        stream = EventStream(client, RL, job_id, poll_interval=0.2)
        seqs = [e.seq async for e in stream]
    assert seqs == [e["seq"] for e in fake_backend.job(job_id).events]
    assert stream.mode == "poll"
    polls = [p for _m, p, _h in fake_backend.state.requests if p.endswith("/events")]
    assert len(polls) > 1


async def test_reconnect_resumes_after_the_last_seen_seq(fake_backend) -> None:
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        job_id = await _job(client, {"events": 20})
        while fake_backend.job(job_id).status != "succeeded":
            await asyncio.sleep(0.01)
        seqs = [e.seq async for e in EventStream(client, RL, job_id, since_seq=10)]
    assert seqs[0] == 11
    stream_call = [h for _m, p, h in fake_backend.state.requests if p.endswith("/events/stream")][0]
    assert stream_call["last-event-id"] == "10"


async def test_truncated_frames_are_dropped_and_re_read() -> None:
    """A frame cut mid-JSON never reaches the consumer; the reconnect re-reads it from the cursor."""
    events = [{"seq": i, "type": "x", "message": f"m{i}", "data": {}} for i in range(1, 6)]
    connections: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/events/stream"):
            since = int(request.headers.get("last-event-id", "0"))
            connections.append(since)
            body = "".join(f"id: {e['seq']}\ndata: {json.dumps(e)}\n\n" for e in events if e["seq"] > since)
            if len(connections) == 1:
                body = body[: body.index('"seq": 3') + 5]  # cut inside the third frame
            return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})
        if request.url.path.endswith("/events"):
            since = int(request.url.params.get("since_seq", "0"))
            return httpx.Response(200, json={"events": [e for e in events if e["seq"] > since]})
        return httpx.Response(200, json={"status": "succeeded" if len(connections) > 1 else "running"})

    async with AsyncSynthClient("http://x", "k", transport=httpx.MockTransport(handler)) as client:
        seqs = [e.seq async for e in EventStream(client, RL, "job_1", min_interval=0.001)]
    assert seqs == [1, 2, 3, 4, 5]
    assert connections[:2] == [0, 2]


async def test_poll_interval_is_fast_while_events_flow_and_never_slower_than_the_limit(fake_backend) -> None:
    fake_backend.state.sse = False
    sleeps: list[float] = []
    real_sleep = asyncio.sleep

    async def recording_sleep(delay: float) -> None:
        sleeps.append(delay)
        await real_sleep(min(delay, 0.01))

    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        job_id = await _job(client, {"events": 5, "hang": True})
        stream = EventStream(client, RL, job_id, poll_interval=0.4, min_interval=0.05, until_terminal=False)
        stream.sleep = recording_sleep
        seen: list[int] = []
        task = asyncio.ensure_future(stream.run(lambda e: seen.append(e.seq)))
        while len(sleeps) < 15:
            await real_sleep(0.01)
        task.cancel()
    assert max(sleeps) <= 0.4
    assert sleeps[0] == pytest.approx(0.05)  # events were waiting: stay fast
    assert sleeps[-1] == pytest.approx(0.4)  # idle: backed off to the --poll-interval ceiling
    assert sleeps == sorted(sleeps)
    assert seen == list(range(1, 8))  # created, started, 5 progress events


class _CutBody(httpx.AsyncByteStream):
    """A body the peer abandons after ``cut`` bytes, as a dropped connection does."""

    def __init__(self, body: bytes, cut: int) -> None:
        self.body, self.cut = body, cut

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        yield self.body[: self.cut]
        raise httpx.RemoteProtocolError("peer closed connection mid-body (injected)")


@pytest.mark.parametrize("sse", [True, False], ids=["sse", "polling"])
async def test_faults_through_a_mock_transport_lose_and_duplicate_nothing(no_backoff, sse: bool) -> None:
    """5xx, 429, refused connections and bodies cut mid-frame: every event arrives exactly once, in order.

    The job makes progress with every request the backend handles (5 more events each), so the stream
    has to reconnect or poll many times before it sees the end.
    """
    events = [{"seq": i, "type": "x", "message": f"m{i}", "data": {"i": i}} for i in range(1, 301)]
    rnd = random.Random(4 if sse else 9)
    faults: Counter[str] = Counter()
    handled = itertools.count(1)

    def handler(request: httpx.Request) -> httpx.Response:
        visible = events[: 5 * next(handled)]
        fault = rnd.choice(["500", "429", "refused", "cut"]) if rnd.random() < 0.3 else None
        path, params = request.url.path, request.url.params
        if path.endswith("/events/stream") and not sse:
            return httpx.Response(404, json={"detail": "no stream here"})
        faults[fault or "none"] += 1
        if fault == "refused":
            raise httpx.ConnectError("connection refused (injected)", request=request)
        if fault == "500":
            return httpx.Response(500, json={"detail": "injected"})
        if fault == "429":
            return httpx.Response(429, headers={"Retry-After": "0"}, json={"detail": "slow down"})
        content_type = "application/json"
        if path.endswith("/events/stream"):
            since = int(request.headers.get("last-event-id") or params.get("since_seq") or 0)
            body = "".join(f"id: {e['seq']}\ndata: {json.dumps(e)}\n\n" for e in visible if e["seq"] > since)
            content_type = "text/event-stream"
        elif path.endswith("/events"):
            since, limit = int(params["since_seq"]), int(params["limit"])
            body = json.dumps({"events": [e for e in visible if e["seq"] > since][: min(limit, 40)]})
        else:
            body = json.dumps({"status": "succeeded" if len(visible) == len(events) else "running"})
        raw = body.encode()
        headers = {"content-type": content_type}
        if fault == "cut":
            return httpx.Response(200, headers=headers, stream=_CutBody(raw, rnd.randint(0, max(0, len(raw) - 1))))
        return httpx.Response(200, headers=headers, content=raw)

    seen: list[int] = []
    async with AsyncSynthClient("http://x", "k", transport=httpx.MockTransport(handler)) as client:
        stream = EventStream(client, RL, "job_1", min_interval=0.001, poll_interval=0.01)
        await asyncio.wait_for(stream.run(lambda event: seen.append(event.seq)), 120)
    assert seen == list(range(1, 301))
    assert stream.mode == ("sse" if sse else "poll")
    assert min(faults[kind] for kind in ("500", "429", "refused", "cut")) >= 2


async def test_a_drain_asks_for_each_page_once_where_a_one_page_at_a_time_reader_would(fake_backend, monkeypatch) -> None:
    """The next page is asked for while one is kept: the same requests as one after the other, none twice."""
    from synth_nb.client import _stream

    monkeypatch.setattr(_stream, "DRAIN_PAGE", 10)
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        job_id = await _job(client, {"events": 25})
        while fake_backend.job(job_id).status != "succeeded":
            await asyncio.sleep(0.01)
        asked: list[int] = []
        fetch = client.get_event_records

        async def recorded(endpoints: FlowEndpoints, job: str, since_seq: int = 0, limit: int = 200, **kw) -> list:
            asked.append(since_seq)
            return await fetch(endpoints, job, since_seq=since_seq, limit=limit, **kw)

        client.get_event_records = recorded  # type: ignore[method-assign]
        got: list = []
        stream = EventStream(client, RL, job_id, use_sse=False)
        stream.limit = 10
        count = await stream.drain(got.append)
    seqs = [e["seq"] for e in fake_backend.job(job_id).events]
    assert count == len(seqs) > 20 and [e.seq for e in got] == seqs
    # each full page's newest seq, then the last one (whose page comes back empty)
    assert asked == [0, *seqs[9::10], *([seqs[-1]] if len(seqs) % 10 else [])]
