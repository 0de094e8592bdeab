"""Client streaming figures: ingest throughput and insert->client latency (SSE vs polling).

Runs the local backend in a separate process (so server and client do not share a GIL) and prints:
  * events/s for parse + dedupe + state alone (pre-encoded pages, no HTTP)
  * events/s for a full history fetch over HTTP (polling pages) and over SSE, from the local backend
  * p50/p95 latency from the backend's event insert (its ``created_at``) to the client's state, for SSE and
    for adaptive polling, with events every 10 ms (dense) and every 300 ms (sparse)
Goals: ingest >= 20k events/s; SSE p95 < 0.5 s on loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from synth_nb.client import AsyncSynthClient, EventStream
from synth_nb.client._parse import parse_event_records
from synth_nb.flows import get_flow
from synth_nb.job import Job

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _local_jobs import start_backend_process, stop_backend_process  # noqa: E402

API_KEY = "sk_bench_0123456789abcdef"
RL = get_flow("rl").endpoints
#: throughput runs are repeated and the median printed (shared CI machines are noisy)
REPEATS = 3


def write_recording(path: Path, events: int, spacing: float) -> Path:
    lines = [{"t": 0, "kind": "meta", "payload": {"flow": "rl"}},
             {"t": 0, "kind": "status", "payload": {"status": "running"}}]
    for i in range(events):
        lines.append({"t": round(i * spacing, 4), "kind": "event",
                      "payload": {"type": "rl.train.step", "message": f"step {i}/{events} reward_mean=0.41",
                                  "data": {"step": i, "total_steps": events, "reward_mean": 0.41}}})
    lines.append({"t": round(events * spacing, 4), "kind": "status", "payload": {"status": "succeeded"}})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def bench_parse_only(n: int = 200_000, page: int = 500) -> float:
    template = {"type": "rl.train.step", "level": "info", "message": "step 3/20 reward_mean=0.41",
                "data": {"step": 3, "total_steps": 20, "reward_mean": 0.41}, "created_at": "2026-01-01T00:00:00.000000Z"}
    pages = [json.dumps({"events": [{**template, "seq": s} for s in range(start + 1, start + page + 1)]}).encode()
             for start in range(0, n, page)]
    job = Job("job_bench", "rl", AsyncSynthClient("http://127.0.0.1:9", "k"))
    started = time.perf_counter()
    for raw in pages + pages[:20]:  # the repeated pages exercise dedupe
        for record in parse_event_records(raw):
            job.ingest_event(record)
    elapsed = time.perf_counter() - started
    assert len(job.events) == n
    return (n + 20 * page) / elapsed


async def create_replay(client: AsyncSynthClient, recording: Path, speed: float = 1.0) -> str:
    created = await client.create_job(RL, {"metadata": {"local_executor": "replay", "recording": str(recording),
                                                          "replay_speed": speed}})
    return str(created.get("job_id") or created["id"])


async def bench_http_ingest(url: str, tmp: Path, n: int) -> tuple[float, float, float]:
    async with AsyncSynthClient(url, API_KEY) as client:
        job_id = await create_replay(client, write_recording(tmp / "burst.jsonl", n, 0.0))
        while (await client.get_status(RL, job_id)).get("status") not in ("succeeded", "failed"):
            await asyncio.sleep(0.1)
        started, since, page = time.perf_counter(), 0, 5000
        while True:  # the backend alone: raw pages, no client parsing (seqs are contiguous on this backend)
            response = await client.request("GET", f"/rl/jobs/{job_id}/events",
                                             params={"since_seq": since, "limit": page})
            if b'"events":[]' in response.content.replace(b" ", b""):
                break
            since += page
        raw = since / (time.perf_counter() - started)
        polled_runs, streamed_runs = [], []
        for _ in range(REPEATS):
            job = Job(job_id, "rl", client, endpoints=RL)
            started = time.perf_counter()
            await job.refresh()
            polled_runs.append(len(job.events) / (time.perf_counter() - started))
            sse_job = Job(job_id, "rl", client, endpoints=RL)
            stream = EventStream(client, RL, job_id, pages=True)
            started = time.perf_counter()
            await stream.run(sse_job.ingest_events)
            streamed_runs.append(len(sse_job.events) / (time.perf_counter() - started))
            assert stream.mode == "sse" and len(sse_job.events) == len(job.events)
    return raw, statistics.median(polled_runs), statistics.median(streamed_runs)


def _ts(created_at: str) -> float:
    return datetime.fromisoformat(created_at.replace("Z", "+00:00")).timestamp()


async def bench_latency(url: str, recording: Path, use_sse: bool, poll_interval: float) -> tuple[float, float, int]:
    async with AsyncSynthClient(url, API_KEY) as client:
        job_id = await create_replay(client, recording)
        job = Job(job_id, "rl", client, endpoints=RL, use_sse=use_sse, poll_interval=poll_interval)
        latencies: list[float] = []

        def on_update(update: object) -> None:
            event = getattr(update, "event", None)
            if event is not None and event.type == "rl.train.step" and event.created_at:
                latencies.append(time.time() - _ts(event.created_at))

        job.add_listener(on_update)
        await job.wait(timeout=600)
        assert job.stream_mode == ("sse" if use_sse else "poll"), job.stream_mode
    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    return statistics.median(latencies), p95, len(latencies)


async def run(url: str, tmp: Path, n: int) -> None:
    raw, polled, streamed = await bench_http_ingest(url, tmp, n)
    print(f"local backend serving raw event pages (no client parsing): {raw:,.0f} events/s")
    print(f"client ingest over HTTP from the local backend ({n} events, median of {REPEATS}): "
          f"polling pages {polled:,.0f} events/s, "
          f"SSE {streamed:,.0f} events/s")
    dense = write_recording(tmp / "dense.jsonl", 300, 0.01)
    sparse = write_recording(tmp / "sparse.jsonl", 12, 0.3)
    for label, recording in (("dense, every 10 ms", dense), ("sparse, every 300 ms", sparse)):
        for mode, use_sse in (("SSE", True), ("polling", False)):
            p50, p95, count = await bench_latency(url, recording, use_sse, poll_interval=5.0)
            print(f"latency insert->client, {label:<21} {mode:<8} p50 {p50 * 1000:7.1f} ms   "
                  f"p95 {p95 * 1000:7.1f} ms   (n={count}, --poll-interval 5)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000, help="events for the HTTP ingest run")
    args = parser.parse_args()
    parse_only = statistics.median(bench_parse_only() for _ in range(REPEATS))
    print(f"parse + dedupe + state (no HTTP, median of {REPEATS}): {parse_only:,.0f} events/s")
    with tempfile.TemporaryDirectory(prefix="synth-nb-bench-") as folder:
        tmp = Path(folder)
        proc, url = start_backend_process(tmp / "backend", API_KEY, recordings=True)
        try:
            asyncio.run(run(url, tmp, args.events))
        finally:
            stop_backend_process(proc)


if __name__ == "__main__":
    main()
