"""A job's whole life through hundreds of injected faults: nothing lost, nothing doubled, one job."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import JobUpdate, submit
from synth_nb.plan import Plan, Step


@pytest.mark.parametrize("sse", [True, False], ids=["sse", "polling"])
async def test_stream_survives_200_faults_without_loss_or_duplicates(
    fake_backend, no_backoff, faulty_transport, tmp_path: Path, sse: bool
) -> None:
    fake_backend.state.sse = sse
    data = tmp_path / "train.jsonl"
    data.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    spec = {"events": 1_000_000, "metrics": 1_000_000, "interval": 0.001}
    plan = Plan(flow="sft", endpoints=get_flow("sft").endpoints, algorithm=None, steps=[
        Step("POST", "/files", {"purpose": "fine-tune"}, kind="upload", upload=data, ref="training_file"),
        Step("POST", "/learning/jobs", {"training_file_id": {"$ref": "training_file"},
                                        "metadata": {"fake": spec}}),
        Step("POST", "/learning/jobs/{job_id}/start", {}),
    ])
    transport = faulty_transport(rate=0.4, seed=11 if sse else 5)
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key, transport=transport) as client:
        job = await submit(plan, client)
        job.min_interval = 0.002
        job.poll_interval = 0.05
        seen_events: Counter[int] = Counter()
        seen_metrics: Counter[tuple[str, int]] = Counter()

        def listen(update: JobUpdate) -> None:
            if update.event is not None:
                seen_events[update.event.seq] += 1
            if update.metric is not None:
                seen_metrics[(update.metric.name, update.metric.step)] += 1

        job.add_listener(listen)
        job.start_monitoring()
        while transport.total < 200:
            await asyncio.sleep(0.02)
        server_job = fake_backend.job(job.id)
        server_job.body["metadata"]["fake"]["stop"] = True  # let the backend finish the job now
        assert await job.wait(timeout=120) == "succeeded"

    assert transport.total >= 200
    assert fake_backend.state.created == 1
    expected_events = [e["seq"] for e in server_job.events]
    expected_metrics = sorted((p["name"], p["step"]) for p in server_job.metrics)
    assert len(expected_events) > 100 and len(expected_metrics) > 50
    assert [e.seq for e in job.events] == expected_events
    assert sorted(seen_events) == expected_events and set(seen_events.values()) == {1}
    assert sorted((m.name, m.step) for m in job.metrics) == expected_metrics
    assert sorted(seen_metrics) == expected_metrics and set(seen_metrics.values()) == {1}
    assert {k for k, v in transport.faults.items() if v} >= {"refused", "reset", "500", "429", "stall"}
    if sse:
        assert transport.faults["truncate"] > 0


async def test_a_cancel_keeps_trying_through_a_burst_of_faults_while_its_budget_lasts(
    fake_backend, no_backoff, faulty_transport
) -> None:
    """More refused cancel requests in a row than the client retries: the cancel still lands in its budget."""
    refusals = {"left": 10}  # the client's own retries stop at 6 attempts (no_backoff)

    class RefuseCancels(faulty_transport):  # type: ignore[misc,valid-type]
        async def handle_async_request(self, request):  # type: ignore[no-untyped-def]
            if request.url.path.endswith("/cancel") and refusals["left"] > 0:
                refusals["left"] -= 1
                import httpx

                raise httpx.ConnectError("connection refused (injected)", request=request)
            return await self.inner.handle_async_request(request)

    plan = Plan(flow="sft", algorithm=None, steps=[
        Step("POST", "/learning/jobs", {"metadata": {"fake": {"hang": True}}}),
        Step("POST", "/learning/jobs/{job_id}/start", {}),
    ], endpoints=get_flow("sft").endpoints)
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key, transport=RefuseCancels(rate=0)) as client:
        job = await submit(plan, client)
        assert await job.cancel(timeout=60) == "cancelled"
    assert refusals["left"] == 0
    assert fake_backend.job(job.id).cancelled
