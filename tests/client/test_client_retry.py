"""Retry policy: what is retried, how Retry-After is honoured, and that creation never duplicates."""

from __future__ import annotations

import httpx
import pytest

from synth_nb.client import AsyncSynthClient
from synth_nb.client._retry import ErrorStatus, RetryPolicy, parse_retry_after
from synth_nb.contract import FlowEndpoints
from synth_nb.errors import NetworkError, RateLimitedError, ServerError

RL = FlowEndpoints(create="/rl/jobs", status="/rl/jobs/{job_id}", events="/rl/jobs/{job_id}/events",
                   metrics="/rl/jobs/{job_id}/metrics", cancel="/rl/jobs/{job_id}/cancel")


def _status(code: int, **headers: str) -> ErrorStatus:
    return ErrorStatus(httpx.Response(code, headers=headers, request=httpx.Request("GET", "http://x")))


def test_retry_after_seconds_and_http_date() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("10000") == 60.0  # capped
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_policy_honours_retry_after_and_protects_non_idempotent_posts() -> None:
    safe, unsafe = RetryPolicy(replay_safe=True), RetryPolicy(replay_safe=False)
    request = httpx.Request("POST", "http://x")
    assert safe.should_retry(_status(429, **{"Retry-After": "2"})) == 2.0
    assert unsafe.should_retry(_status(429)) is True  # a 429 was not processed
    assert safe.should_retry(_status(502)) is True
    assert unsafe.should_retry(_status(502)) is False
    assert unsafe.should_retry(httpx.ConnectError("refused", request=request)) is True  # never sent
    assert unsafe.should_retry(httpx.ReadError("reset", request=request)) is False  # may have been processed
    assert safe.should_retry(httpx.ReadError("reset", request=request)) is True
    assert safe.should_retry(ValueError("bug")) is False
    assert safe.should_retry(_status(422)) is False  # the request itself is wrong: replaying cannot help


async def test_post_without_idempotency_key_is_not_replayed_after_a_reset(no_backoff) -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        raise httpx.ReadError("reset", request=request)

    async with AsyncSynthClient("http://x", "k", transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(NetworkError):
            await client.request_json("POST", "/rl/jobs", json={})
    assert len(calls) == 1


async def test_creation_is_retried_with_the_same_key(no_backoff) -> None:
    keys = []

    def handler(request: httpx.Request) -> httpx.Response:
        keys.append(request.headers.get("idempotency-key"))
        if len(keys) == 1:
            raise httpx.ReadError("reset after the server created the job", request=request)
        if len(keys) == 2:
            return httpx.Response(500, json={"detail": "oops"})
        return httpx.Response(201, json={"job_id": "job_1"})

    async with AsyncSynthClient("http://x", "k", transport=httpx.MockTransport(handler)) as client:
        assert (await client.create_job(RL, {}))["job_id"] == "job_1"
    assert len(keys) == 3 and len(set(keys)) == 1 and keys[0]


async def test_persistent_429_and_5xx_become_typed_errors(no_backoff) -> None:
    def too_many(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers={"Retry-After": "1"}, json={"detail": "rate limited"})

    def broken(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, text="<html>internal</html>")

    async with AsyncSynthClient("http://x", "k", transport=httpx.MockTransport(too_many)) as client:
        with pytest.raises(RateLimitedError, match="rate limited"):
            await client.get_status(RL, "job_1")
    async with AsyncSynthClient("http://x", "k", transport=httpx.MockTransport(broken)) as client:
        with pytest.raises(ServerError, match="internal") as info:
            await client.get_status(RL, "job_1")
    assert info.value.status_code == 500


@pytest.mark.parametrize("replay_safe", [True, False])
@pytest.mark.parametrize("first_contact", [True, False])
def test_the_plain_client_retries_what_the_policy_retries(replay_safe: bool, first_contact: bool) -> None:
    """``PlainClient`` (``synth-nb cancel``) decides as ``RetryPolicy`` does, for every status and failure kind."""
    from synth_nb.client import plain

    policy = RetryPolicy(replay_safe=replay_safe, first_contact=first_contact)
    request = httpx.Request("GET", "http://x")
    for code, headers in ((429, {"Retry-After": "2"}), (429, {}), (500, {}), (502, {}), (404, {}), (422, {})):
        answer = plain.PlainAnswer(code, "", {k.lower(): v for k, v in headers.items()}, b"",
                                   plain.PlainRequest("GET", "http://x"))
        wait = plain._retry_after_status(answer, 1, replay_safe=replay_safe)
        expected = policy.should_retry(_status(code, **headers))
        assert (wait is not None) == bool(expected), (code, headers)
        if isinstance(expected, float) and not isinstance(expected, bool):
            assert wait == expected
    for ours, theirs in ((plain.ConnectError("refused"), httpx.ConnectError("refused", request=request)),
                         (plain.ConnectTimeout("slow"), httpx.ConnectTimeout("slow", request=request)),
                         (plain.ReadError("reset"), httpx.ReadError("reset", request=request)),
                         (plain.ReadTimeout("slow"), httpx.ReadTimeout("slow", request=request)),
                         (plain.RemoteProtocolError("junk"), httpx.RemoteProtocolError("junk", request=request))):
        wait = plain._retry_after_failure(ours, 1, replay_safe=replay_safe, first_contact=first_contact,
                                          started=policy.started)
        assert (wait is not None) == bool(policy.should_retry(theirs)), type(ours).__name__


def test_the_plain_client_leaves_a_proxied_backend_to_httpx() -> None:
    """A proxy named in the environment for the backend's URL (as httpx reads it) sends ``cancel`` through httpx."""
    from synth_nb.client import PlainClient

    assert PlainClient.serves("http://127.0.0.1:8000", {}) and PlainClient.serves("https://api.example.com", {})
    assert not PlainClient.serves("http://127.0.0.1:8000", {"HTTP_PROXY": "http://proxy:3128"})
    assert not PlainClient.serves("https://api.example.com", {"https_proxy": "http://proxy:3128"})
    assert not PlainClient.serves("https://api.example.com", {"ALL_PROXY": "socks5://proxy:1080"})
    assert PlainClient.serves("https://api.example.com", {"HTTP_PROXY": "http://proxy:3128"})  # http only
    bypassed = {"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "localhost,.example.com,example.net"}
    assert PlainClient.serves("https://api.example.com", bypassed)
    assert not PlainClient.serves("https://example.com", bypassed)  # ".example.com": its subdomains only
    assert PlainClient.serves("https://example.net", bypassed) and PlainClient.serves("https://a.example.net", bypassed)
    assert not PlainClient.serves("https://example.org", bypassed)
    assert PlainClient.serves("https://example.org", {"HTTPS_PROXY": "http://proxy:3128", "no_proxy": "*"})


def test_a_connection_made_once_turns_refusals_into_an_outage_not_a_first_contact(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A create whose answer was cut (the connection was made: the backend is there and may have the job), then
    refused while it restarts: retried with the full budget, and never said to be "nothing was sent"."""
    import time

    from synth_nb.client import plain
    from synth_nb.errors import UnreachableError

    request = httpx.Request("POST", "http://x")
    refused, cut = httpx.ConnectError("refused", request=request), httpx.ReadError("reset", request=request)
    never = RetryPolicy(first_contact=True, started=time.monotonic() - 5)
    assert never.should_retry(refused) is False and never.unreached  # nobody there after 2 s: given up
    once = RetryPolicy(first_contact=True, started=time.monotonic() - 5)
    assert once.should_retry(cut) is True and once.should_retry(refused) is True and not once.unreached

    failures = iter([plain.ReadError("reset"), *[plain.ConnectError("refused")] * 10])

    def send(*_args: object) -> plain.PlainAnswer:
        raise next(failures)

    monkeypatch.setattr(plain, "FIRST_CONTACT_SECONDS", 0.0)  # a refusal on first contact gives up at once
    monkeypatch.setattr(plain.time, "sleep", lambda _seconds: None)
    client = plain.PlainClient("http://127.0.0.1:9", "sk-test")
    monkeypatch.setattr(client, "_send", send)
    with pytest.raises(NetworkError) as info:
        client.request("POST", "/rl/jobs", json_body={}, idempotency_key="k1")
    assert not isinstance(info.value, UnreachableError) and "nothing was sent" not in str(info.value)
    assert len(list(failures)) == 10 - (client.max_attempts - 1)  # every attempt used
    fresh = iter([plain.ConnectError("refused")] * 10)
    monkeypatch.setattr(client, "_send", lambda *_args: (_ for _ in ()).throw(next(fresh)))
    with pytest.raises(UnreachableError, match="nothing was sent"):
        client.request("POST", "/rl/jobs", json_body={}, idempotency_key="k2")
