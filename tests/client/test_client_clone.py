"""``clone()`` gives an independent client; a closed client raises ``ClientClosedError``, never httpx's error."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from synth_nb.client import AsyncSynthClient, EventStream
from synth_nb.contract import FlowEndpoints
from synth_nb.errors import ClientClosedError, ClientError

KEY = "sk_clone_canary_0123456789abcdef"
RL = FlowEndpoints(create="/rl/jobs", status="/rl/jobs/{job_id}", events="/rl/jobs/{job_id}/events",
                   metrics="/rl/jobs/{job_id}/metrics", cancel="/rl/jobs/{job_id}/cancel",
                   events_stream="/rl/jobs/{job_id}/events/stream")


def _answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"status": "running", "auth": request.headers.get("authorization")})


async def test_clone_has_the_same_settings_and_its_own_connection_pool() -> None:
    original = AsyncSynthClient("http://h:1/api/", KEY, timeout=7.0, max_attempts=3, sse_read_timeout=9.0,
                                transport=httpx.MockTransport(_answer))
    copy = original.clone(transport=httpx.MockTransport(_answer))
    assert (copy.base_url, copy.timeout, copy.max_attempts, copy.sse_read_timeout) == ("http://h:1/api", 7.0, 3, 9.0)
    assert copy.http is not original.http and copy.user_agent == original.user_agent
    assert repr(copy) == repr(original) and KEY not in repr(copy)
    await original.aclose()
    assert original.closed and not copy.closed
    assert (await copy.get_status(RL, "job_1"))["auth"] == f"Bearer {KEY}"  # same key, still open
    await copy.aclose()


async def test_clone_does_not_carry_over_a_custom_transport() -> None:
    seen: list[str] = []

    def mock(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json={})

    original = AsyncSynthClient("http://127.0.0.1:9", KEY, transport=httpx.MockTransport(mock), max_attempts=1)
    async with original.clone() as copy:
        assert copy.http is not original.http
        with pytest.raises(ClientError):  # a real (refused) connection, not the mock
            await copy.get_status(RL, "job_1")
    assert seen == []
    await original.aclose()


@pytest.mark.parametrize("use", ["request", "status", "stream"])
async def test_a_closed_client_raises_client_closed_error(use: str) -> None:
    client = AsyncSynthClient("http://h:1", KEY, transport=httpx.MockTransport(_answer))
    await client.aclose()
    with pytest.raises(ClientClosedError) as info:
        if use == "request":
            await client.request_json("GET", "/anything")
        elif use == "status":
            await client.get_status(RL, "job_1")
        else:
            await asyncio.wait_for(EventStream(client, RL, "job_1").run(lambda _event: None), 30)
    text = str(info.value)
    assert "http://h:1/api" in text and "was closed" in text
    assert "%synth_train --attach JOB_ID" in text and "synth-nb attach JOB_ID" in text
    assert KEY not in text and info.value.job_id is None
