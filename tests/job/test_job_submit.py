"""submit() executes plans (uploads, refs, checks, create, start); attach() re-finds jobs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synth_nb.client import AsyncSynthClient
from synth_nb.contract import FlowEndpoints
from synth_nb.errors import ClientError, NotFoundError, ValidationError
from synth_nb.flows import get_flow, guess_flow
from synth_nb.job import JobRegistry, attach, submit
from synth_nb.plan import Plan, Step


def _every_flow(job_id: str) -> dict[str, FlowEndpoints]:
    return {name: get_flow(name).endpoints for name in guess_flow(job_id)}


def _dataset(tmp_path: Path, lines: int = 4) -> Path:
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps({"messages": [{"role": "user", "content": str(i)}]}) + "\n"
                            for i in range(lines)))
    return path


def _sft_plan(tmp_path: Path, **extra_upload_body: object) -> Plan:
    return Plan(flow="sft", endpoints=get_flow("sft").endpoints,
                algorithm=None, config_path=tmp_path / "sft.toml", idempotency_key="key-1", steps=[
        Step("POST", "/files", {"purpose": "fine-tune", **extra_upload_body}, kind="upload",
             upload=_dataset(tmp_path), ref="training_file"),
        Step("POST", "/learning/jobs", {"model": "Qwen/Qwen3-0.6B", "training_file_id": {"$ref": "training_file"},
                                        "metadata": {"fake": {"events": 3}}}),
        Step("POST", "/learning/jobs/{job_id}/start", {}),
    ])


async def test_sft_plan_uploads_creates_starts_and_registers(fake_backend, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sft.toml").write_text("[job]\n")
    registry = JobRegistry(tmp_path)
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        job = await submit(_sft_plan(tmp_path, limit_lines=2), client, registry=registry)
        assert await job.wait(timeout=30) == "succeeded"
    server_job = fake_backend.job(job.id)
    file_id = server_job.body["training_file_id"]
    assert fake_backend.state.files[file_id]["content"].count(b"\n") == 2
    paths = [p for m, p, _h in fake_backend.state.requests if m == "POST"]
    assert paths == ["/api/files", "/api/learning/jobs", f"/api/learning/jobs/{job.id}/start"]
    create_headers = [h for m, p, h in fake_backend.state.requests if p == "/api/learning/jobs"][0]
    assert create_headers["idempotency-key"] == "key-1"
    record = registry.get(job.id)
    assert record is not None and record.flow == "sft" and record.backend_url == f"{fake_backend.url}/api"
    assert len(record.config_hash) == 16 and record.status == "succeeded" and record.last_seq == job.last_seq


async def test_extra_upload_fields_are_sent_as_form_fields(fake_backend, tmp_path: Path) -> None:
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        job = await submit(_sft_plan(tmp_path, split="train"), client)
    file_id = fake_backend.job(job.id).body["training_file_id"]
    assert fake_backend.state.files[file_id]["fields"] == {"purpose": "fine-tune", "split": "train"}


async def test_failing_check_stops_before_anything_is_created(fake_backend) -> None:
    plan = Plan(flow="rl", endpoints=get_flow("rl").endpoints, algorithm=None, steps=[
        Step("POST", "/rl/verify_task_app", {"endpoint_base_url": "http://unreachable:1"}, kind="check",
             description="verify the task app"),
        Step("POST", "/rl/jobs", {"metadata": {}}),
    ])
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        with pytest.raises(ClientError, match="preflight check failed \\(verify the task app\\)"):
            await submit(plan, client)
    assert fake_backend.state.created == 0


async def test_backend_rejection_keeps_its_message(fake_backend) -> None:
    plan = Plan(flow="rl", endpoints=get_flow("rl").endpoints,
                algorithm=None, steps=[Step("POST", "/rl/jobs", {"metadata": {"reject": True}})])
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        with pytest.raises(ValidationError, match="not supported"):
            await submit(plan, client)


async def test_attach_finds_the_flow_and_rebuilds_history(fake_backend) -> None:
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        created = await client.create_job(fake_backend.endpoints("prompt_learning"),
                                          {"metadata": {"fake": {"events": 30, "metrics": 12}}})
        job_id = created["job_id"]
        while fake_backend.job(job_id).status != "succeeded":
            import asyncio

            await asyncio.sleep(0.01)
        job = await attach(job_id, client, _every_flow(job_id))
        with pytest.raises(NotFoundError, match="job_nope"):
            await attach("job_nope", client, _every_flow("job_nope"))
    assert job.flow == "prompt_learning" and job.done
    assert [e.seq for e in job.events] == [e["seq"] for e in fake_backend.job(job_id).events]
    assert len(job.metrics) == len(fake_backend.job(job_id).metrics)


def test_guess_flow_tries_the_flow_whose_id_prefix_matches_first() -> None:
    assert guess_flow("pl_123") == ["prompt_learning", "rl", "sft"]
    assert guess_flow("job_123") == ["rl", "sft", "prompt_learning"]  # prefixed flows that do not match: last


async def test_the_results_folder_travels_with_the_job_and_comes_back_on_attach(fake_backend, tmp_path: Path) -> None:
    registry = JobRegistry(tmp_path)
    plan = _sft_plan(tmp_path)
    plan.results_folder = tmp_path / "out"
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        job = await submit(plan, client, registry=registry)
        assert job.results_folder == tmp_path / "out"
        record = registry.get(job.id)
        assert record is not None and record.results_folder == str(tmp_path / "out")
        again = await attach(job.id, client, _every_flow(job.id), registry=registry)
    assert again.results_folder == tmp_path / "out"


async def test_a_submitted_job_follows_the_endpoints_its_plan_carries(fake_backend) -> None:
    # a flow the registry has never heard of: everything the job needs travels with the plan
    endpoints = fake_backend.endpoints("rl")
    plan = Plan(flow="toy", endpoints=endpoints, algorithm=None,
                steps=[Step("POST", endpoints.create, {"metadata": {"fake": {"events": 5, "metrics": 2}}})])
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        job = await submit(plan, client)
        assert await job.wait(timeout=30) == "succeeded"
    assert job.endpoints is endpoints and job.flow == "toy"
    assert [e.seq for e in job.events] == [e["seq"] for e in fake_backend.job(job.id).events]


async def test_attach_tries_the_flow_the_job_registry_recorded_first(fake_backend, tmp_path: Path) -> None:
    registry = JobRegistry(tmp_path)
    async with AsyncSynthClient(fake_backend.url, fake_backend.api_key) as client:
        job = await submit(_sft_plan(tmp_path), client, registry=registry)
        assert await job.wait(timeout=30) == "succeeded"
        # the id has no flow prefix, so without the record RL's paths would be asked first
        flows = {name: fake_backend.endpoints(name) for name in ("rl", "prompt_learning", "sft")}
        again = await attach(job.id, client, flows, registry=registry)
    assert again.flow == "sft" and again.endpoints is flows["sft"]
    rl_status = flows["rl"].status.replace("{job_id}", job.id)
    assert not any(path.endswith(rl_status) for _, path, _ in fake_backend.state.requests)
