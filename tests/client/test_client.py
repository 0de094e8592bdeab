"""AsyncSynthClient against the in-test backend over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from synth_nb.client import AsyncSynthClient, EventStream
from synth_nb.contract import FlowEndpoints
from synth_nb.errors import AuthError, ConfigError, NetworkError, NotFoundError, ValidationError

#: RL paths, for tests that answer with a MockTransport instead of the fake backend
RL = FlowEndpoints(create="/rl/jobs", status="/rl/jobs/{job_id}", events="/rl/jobs/{job_id}/events",
                   metrics="/rl/jobs/{job_id}/metrics", cancel="/rl/jobs/{job_id}/cancel")


def test_base_url_is_normalised_once_by_the_backend_rule() -> None:
    assert AsyncSynthClient("  https://host.example/api/v1/ ", "k").base_url == "https://host.example/api"
    with pytest.raises(ConfigError, match="http"):
        AsyncSynthClient("localhost:8000", "k")


def test_paths_with_api_prefix_are_not_doubled() -> None:
    client = AsyncSynthClient("http://h:1", "k")
    assert client.url_for("/api/learning/jobs") == "http://h:1/api/learning/jobs"
    assert client.url_for("/learning/jobs") == "http://h:1/api/learning/jobs"
    assert client.url_for("learning/jobs") == "http://h:1/api/learning/jobs"


async def test_headers_carry_bearer_user_agent_and_idempotency_key(fake_backend) -> None:
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        created = await client.create_job(fake_backend.endpoints("rl"), {"metadata": {"fake": {"events": 1}}},
                                          idempotency_key="abc-1")
    method, path, headers = fake_backend.state.requests[-1]
    assert (method, path) == ("POST", "/api/rl/jobs")
    assert headers["authorization"] == f"Bearer {fake_backend.api_key}"
    assert headers["user-agent"].startswith("synth-nb/")
    assert headers["idempotency-key"] == "abc-1"
    assert created["job_id"].startswith("job_")


async def test_same_idempotency_key_returns_the_same_job(fake_backend) -> None:
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        first = await client.create_job(fake_backend.endpoints("sft"), {"metadata": {}}, idempotency_key="same")
        second = await client.create_job(fake_backend.endpoints("sft"), {"metadata": {}}, idempotency_key="same")
    assert first["job_id"] == second["job_id"]
    assert fake_backend.state.created == 1


async def test_wrong_key_is_auth_error_without_the_key(fake_backend) -> None:
    wrong = "sk_wrong_key_should_never_leak_42"
    async with AsyncSynthClient(fake_backend.url, wrong) as client:
        with pytest.raises(AuthError) as info:
            await client.get_status(fake_backend.endpoints("rl"), "job_1")
    assert info.value.status_code == 401
    assert "invalid api key" in str(info.value)
    assert wrong not in str(info.value) and wrong not in repr(client)


async def test_unknown_job_is_not_found(fake_backend) -> None:
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        with pytest.raises(NotFoundError, match="job not found"):
            await client.get_status(fake_backend.endpoints("sft"), "job_missing")


async def test_rejected_body_is_validation_error_with_backend_message(fake_backend) -> None:
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        with pytest.raises(ValidationError, match="model 'nope' is not supported") as info:
            await client.create_job(fake_backend.endpoints("rl"), {"metadata": {"reject": True}})
    assert info.value.status_code == 422


async def test_unreachable_backend_is_network_error(no_backoff) -> None:
    async with AsyncSynthClient("http://127.0.0.1:9", "sk_canary_value_123456", max_attempts=2) as client:
        with pytest.raises(NetworkError) as info:
            await client.get_status(RL, "job_1")
    assert "127.0.0.1:9" in str(info.value)
    assert "sk_canary_value_123456" not in str(info.value)


async def test_upload_sends_multipart_purpose_and_limited_lines(fake_backend, tmp_path: Path) -> None:
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps({"messages": [{"role": "user", "content": str(i)}]}) + "\n"
                            for i in range(5)))
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        uploaded = await client.upload_file(data, purpose="fine-tune", limit_lines=2)
    stored = fake_backend.state.files[uploaded["id"]]
    assert stored["purpose"] == "fine-tune"
    assert stored["filename"] == "train.jsonl"
    assert stored["content"].count(b"\n") == 2


async def test_events_and_metrics_are_parsed(fake_backend) -> None:
    sft = fake_backend.endpoints("sft")
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        job_id = (await client.create_job(sft, {"metadata": {"fake": {"events": 3, "metrics": 12}}}))["job_id"]
        await client.start(sft, job_id)
        async for _event in EventStream(client, sft, job_id):
            pass
        events = await client.get_events(sft, job_id, since_seq=1)
        newest = await client.get_metrics(sft, job_id, limit=3)
        after = await client.get_metrics(sft, job_id, after_step=9, limit=100)
    assert [e.seq for e in events] == list(range(2, 2 + len(events)))
    assert events[-1].type == "learning.job.completed"
    assert len(newest) == 3
    assert min(p.step for p in after) == 10


async def test_retries_5xx_then_succeeds_with_mock_transport(no_backoff) -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if len(calls) < 3:
            return httpx.Response(503, json={"detail": "warming up"})
        return httpx.Response(200, json={"status": "running"})

    async with AsyncSynthClient("http://x", "k", transport=httpx.MockTransport(handler)) as client:
        assert (await client.get_status(RL, "job_1"))["status"] == "running"
    assert len(calls) == 3
