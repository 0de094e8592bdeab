"""Job: dedup, ordering, status normalisation, wait/cancel/updates/timeout, DataFrames."""

from __future__ import annotations

import asyncio
import sys

import pytest

from synth_nb.client import AsyncSynthClient
from synth_nb.errors import JobCancelledError, JobFailedError, JobTimeoutError, SynthNbError
from synth_nb.flows import get_flow
from synth_nb.job import Job, JobUpdate
from synth_nb.records import Event, MetricPoint


def _job() -> Job:
    return Job("job_1", "sft", AsyncSynthClient("http://127.0.0.1:9", "k"),
               endpoints=get_flow("sft").endpoints)


def test_events_dedupe_by_seq_and_stay_ordered() -> None:
    job = _job()
    for seq in (1, 3, 2, 3, 1, 4):
        job.ingest_event(Event(seq=seq, type="x"))
    assert [e.seq for e in job.events] == [1, 2, 3, 4]
    assert job.last_seq == 4


def test_metrics_dedupe_by_name_and_step() -> None:
    job = _job()
    for name, step in (("loss", 1), ("loss", 2), ("val", 1), ("loss", 1), ("loss", 0)):
        job.ingest_metric(MetricPoint(name=name, step=step, value=float(step)))
    assert [(m.name, m.step) for m in job.metrics] == [("loss", 0), ("loss", 1), ("val", 1), ("loss", 2)]
    assert job.metric_series("loss") == [(0, 0.0), (1, 1.0), (2, 2.0)]


@pytest.mark.parametrize(("raw", "status"), [("COMPLETED", "succeeded"), ("canceled", "cancelled"),
                                             ("in_progress", "running"), ("error", "error")])
def test_status_is_normalised_and_error_is_terminal(raw: str, status: str) -> None:
    job = _job()
    job.ingest_status({"status": raw})
    assert job.status == status
    assert job.terminal == (status in ("succeeded", "cancelled", "error"))


def test_raise_for_status() -> None:
    job = _job()
    job.ingest_status({"status": "failed"})
    job.ingest_event(Event(seq=1, type="sft.job.failed", level="error", data={"detail": "OOM"}))
    with pytest.raises(JobFailedError, match="OOM"):
        job.raise_for_status()
    job.ingest_status({"status": "cancelled"})
    with pytest.raises(JobCancelledError):
        job.raise_for_status()


def test_dataframes() -> None:
    job = _job()
    job.ingest_event(Event(seq=1, type="a", message="hi"))
    job.ingest_metric(MetricPoint(name="loss", step=1, value=0.5))
    assert list(job.events_df()["type"]) == ["a"]
    assert list(job.metrics_df()["value"]) == [0.5]
    assert list(_job().events_df().columns)[:2] == ["seq", "type"]


def test_dataframes_without_pandas_name_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """pandas is optional (`make demo` leaves it out): each DataFrame view says how to get it, no ImportError."""
    monkeypatch.setitem(sys.modules, "pandas", None)
    for view in ("events_df", "metrics_df", "candidates_df"):
        with pytest.raises(SynthNbError, match=r"pip install pandas"):
            getattr(_job(), view)()


async def _create(fake_backend, flow: str, fake: dict) -> tuple[AsyncSynthClient, str]:
    client = AsyncSynthClient(fake_backend.url, fake_backend.api_key)
    endpoints = fake_backend.endpoints(flow)
    created = await client.create_job(endpoints, {"metadata": {"fake": fake}})
    await client.start(endpoints, created["job_id"])  # only SFT jobs have a start path
    return client, created["job_id"]


@pytest.mark.parametrize("sse", [True, False])
async def test_wait_collects_everything_exactly_once(fake_backend, sse: bool) -> None:
    fake_backend.state.sse = sse
    client, job_id = await _create(fake_backend, "sft", {"events": 300, "metrics": 120, "batch": 25,
                                                         "interval": 0.005})
    async with client:
        job = Job(job_id, "sft", client, endpoints=get_flow("sft").endpoints, poll_interval=0.5)
        assert await job.wait(timeout=30) == "succeeded"
    server = fake_backend.job(job_id)
    assert [e.seq for e in job.events] == [e["seq"] for e in server.events]
    assert sorted((m.name, m.step) for m in job.metrics) == sorted((p["name"], p["step"]) for p in server.metrics)
    assert job.done and job.succeeded
    assert job.stream_mode == ("sse" if sse else "poll")


async def test_failed_job_raises_on_raise_for_status(fake_backend) -> None:
    client, job_id = await _create(fake_backend, "rl", {"events": 3, "final": "failed"})
    async with client:
        job = Job(job_id, "rl", client, endpoints=get_flow("rl").endpoints, poll_interval=0.5)
        assert await job.wait(timeout=30) == "failed"
        with pytest.raises(JobFailedError, match="boom"):
            job.raise_for_status()


async def test_poll_timeout_raises_and_leaves_the_job_running(fake_backend) -> None:
    client, job_id = await _create(fake_backend, "rl", {"events": 2, "hang": True})
    async with client:
        job = Job(job_id, "rl", client, endpoints=get_flow("rl").endpoints, poll_interval=0.2)
        with pytest.raises(JobTimeoutError, match="synth-nb attach"):
            await job.wait(timeout=0.3)
        await job.stop_monitoring()
    assert fake_backend.job(job_id).status == "running"


async def test_cancel_sends_request_and_confirms_terminal_state(fake_backend) -> None:
    client, job_id = await _create(fake_backend, "prompt_learning", {"events": 2, "hang": True})
    async with client:
        job = Job(job_id, "prompt_learning", client,
                  endpoints=get_flow("prompt_learning").endpoints, poll_interval=0.2)
        job.start_monitoring()
        while not job.events:
            await asyncio.sleep(0.01)
        assert await job.cancel() == "cancelled"
        assert job.done
    assert any(path.endswith(f"/{job_id}/cancel") for _m, path, _h in fake_backend.state.requests)
    assert job.events[-1].type == "job.cancelled"


async def test_updates_give_history_then_live_to_several_consumers(fake_backend) -> None:
    client, job_id = await _create(fake_backend, "rl", {"events": 40, "metrics": 5, "interval": 0.002})
    async with client:
        job = Job(job_id, "rl", client, endpoints=get_flow("rl").endpoints, poll_interval=0.2)

        async def consume() -> list[JobUpdate]:
            return [u async for u in job.updates()]

        first = asyncio.ensure_future(consume())
        await asyncio.sleep(0.05)
        second = asyncio.ensure_future(consume())
        a, b = await asyncio.wait_for(asyncio.gather(first, second), 30)
        late = [u async for u in job.updates()]
    for seen in (a, b, late):
        assert [u.event.seq for u in seen if u.kind == "event"] == [e.seq for e in job.events]
        assert len([u for u in seen if u.kind == "metric"]) == len(job.metrics) > 0
        assert seen[-1].kind == "done"


def test_export_summary_is_only_for_flows_with_a_summary(tmp_path) -> None:
    from synth_nb.errors import ConfigError

    with pytest.raises(ConfigError, match="has no summary to export .only prompt learning jobs"):
        _job().export_summary(tmp_path)
    assert not list(tmp_path.iterdir())


def test_timeline_entries_and_unreadable_points_are_kept_once_with_the_key_masked() -> None:
    key = "sk_live_ABCDEFGHIJKLMNOP1234"
    job = Job("job_1", "sft", AsyncSynthClient("http://127.0.0.1:9", key), endpoints=get_flow("sft").endpoints)
    seen: list[JobUpdate] = []
    job.add_listener(seen.append)
    timeline = [{"phase": "queued", "created_at": "t0"}, {"phase": "training", "message": f"key {key}"}, "note"]
    assert job.ingest_timeline(timeline) == 3 and job.ingest_timeline(timeline) == 0  # the whole list every read
    assert [e.get("phase", e.get("raw")) for e in job.timeline] == ["queued", "training", "note"]
    assert key not in repr(job.timeline) and "1234" in job.timeline[1]["message"]
    assert [(u.kind, u.entry) for u in seen] == [("phase", e) for e in job.timeline]
    bad = [{"raw": {"name": "loss", "value": f"token {key}"}, "reason": "value not a number"}]
    assert job.ingest_unreadable_metrics(bad) == 1 and job.ingest_unreadable_metrics(bad) == 0
    assert key not in repr(job.unreadable_metrics)


def test_exports_of_several_jobs_to_one_folder_are_named_by_job_id(tmp_path) -> None:
    """``job.export_summary(folder)`` writes ``<folder>/<job id>/summary.md``: the next job's export keeps the last."""
    flow = get_flow("prompt_learning")
    written = []
    for job_id in ("pl_first", "pl_second"):
        job = Job(job_id, "prompt_learning", AsyncSynthClient("http://127.0.0.1:9", "k"), endpoints=flow.endpoints)
        job.ingest_status({"status": "succeeded", "best_score": 0.5})
        written.append(job.export_summary(tmp_path))
    assert written == [tmp_path / "pl_first" / "summary.md", tmp_path / "pl_second" / "summary.md"]
    assert all(f"`{path.parent.name}`" in path.read_text() for path in written)


def test_a_job_followed_to_its_end_writes_its_files_once_into_its_own_folder(tmp_path) -> None:
    """A job submitted from the project: its folder is its config's results folder, else the project's
    ``.synth_nb/runs``; a job sent from elsewhere has none known (``results/<job id>/``). The files are written
    when it ends, once, however many ask."""
    from synth_nb.job import JobRecord, JobRegistry

    registry = JobRegistry(tmp_path)
    registry.record(JobRecord("pl_once", "prompt_learning", "http://127.0.0.1:9"))
    registry.record(JobRecord("pl_named", "prompt_learning", "http://127.0.0.1:9", results_folder=str(tmp_path / "out")))

    def job_of(job_id: str) -> Job:
        return Job(job_id, "prompt_learning", AsyncSynthClient("http://127.0.0.1:9", "k"),
                   endpoints=get_flow("prompt_learning").endpoints, registry=registry)

    assert job_of("pl_named").results_folder == tmp_path / "out"
    assert job_of("pl_elsewhere").results_folder is None
    job = job_of("pl_once")
    assert job.results_folder == tmp_path / ".synth_nb" / "runs"
    job.ingest_status({"status": "succeeded", "best_score": 0.5})
    first = job.write_results()
    summary = tmp_path / ".synth_nb" / "runs" / "pl_once" / "summary.md"
    assert first.files[0] == summary and first.problem is None and first.bundle is None
    stamp = summary.stat().st_mtime_ns
    assert job.write_results() is first and summary.stat().st_mtime_ns == stamp
