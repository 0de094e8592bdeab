"""``unreachable_since``: set when requests get no answer from the backend, cleared by any answer."""

from __future__ import annotations

from datetime import datetime

import httpx
import pytest

from synth_nb.client import AsyncSynthClient
from synth_nb.errors import NetworkError, NotFoundError, ServerError


def _client(answers: list[object]) -> tuple[AsyncSynthClient, list[datetime | None]]:
    """A client whose transport plays ``answers`` in order (an int is a status, an exception is raised);
    the second list gets ``unreachable_since`` as it was when each request was sent."""
    seen: list[datetime | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(client.unreachable_since)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        assert isinstance(answer, int)
        return httpx.Response(answer, json={"status": "running"})

    client = AsyncSynthClient("http://backend", "k", transport=httpx.MockTransport(handler), max_attempts=3)
    return client, seen


@pytest.mark.parametrize("failure", [httpx.ConnectError("refused"), httpx.ConnectTimeout("slow"), 502, 503, 504])
async def test_no_answer_sets_it_and_the_next_answer_clears_it(no_backoff: None, failure: object) -> None:
    client, seen = _client([failure, failure, 200])
    async with client:
        assert client.unreachable_since is None
        await client.request_json("GET", "/rl/jobs/1")
    assert seen[0] is None and seen[1] is not None and seen[2] == seen[1]  # the first failure's time is kept
    assert seen[1].tzinfo is not None
    assert client.unreachable_since is None


async def test_it_stays_set_when_every_retry_fails(no_backoff: None) -> None:
    client, _ = _client([httpx.ConnectError("refused")] * 3)
    async with client:
        with pytest.raises(NetworkError):
            await client.request_json("GET", "/rl/jobs/1")
        assert client.unreachable_since is not None


@pytest.mark.parametrize(("answer", "error"), [(404, NotFoundError), (500, ServerError)])
async def test_an_error_answer_is_still_an_answer(no_backoff: None, answer: int, error: type[Exception]) -> None:
    client, _ = _client([httpx.ConnectError("refused"), answer, answer, answer])
    async with client:
        with pytest.raises(error):
            await client.request_json("GET", "/rl/jobs/1")
        assert client.unreachable_since is None


async def test_a_read_timeout_does_not_count(no_backoff: None) -> None:
    client, _ = _client([httpx.ReadTimeout("quiet")] * 3)
    async with client:
        with pytest.raises(NetworkError):
            await client.request_json("GET", "/rl/jobs/1")
        assert client.unreachable_since is None
