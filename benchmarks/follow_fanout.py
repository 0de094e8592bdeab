"""Fan-out as users run it: many fast jobs, each followed by a synth-nb ``Job`` (what ``wait()``, the CLI and
the notebook panel use), all in this one process; the backend runs in a process of its own.

Replay SFT jobs emit an event every ``1 / rate`` seconds; every job gets one ``Job`` follower (SSE for
events, polling for status and metrics). Prints events delivered, lost and duplicated, the latency from the
backend's insert (the event's ``created_at``) to the event's arrival in the job's history (p50/p95), and
the followers' CPU per event delivered.

Anchor: 20 jobs x 500 events/s gave p95 1,149 ms (31 us CPU per event). Goal: p95 <= 250 ms.
``benchmarks/fanout.py`` measures the backend alone (aiohttp readers).

Run: ``python benchmarks/follow_fanout.py [--jobs 20] [--rate 500] [--seconds 10]``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import msgspec

from synth_nb.client import AsyncSynthClient, EventRecord
from synth_nb.flows import get_flow
from synth_nb.job import Job

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _local_jobs import start_backend_process, stop_backend_process  # noqa: E402
from fanout import TICK, process_cpu_seconds, write_recording  # noqa: E402

API_KEY = "sk_bench_follow_0123456789abcdef"
SFT = get_flow("sft").endpoints
ANCHOR_P95_MS = 1149
GOAL_P95_MS = 250


class _Created(msgspec.Struct):
    type: str
    created_at: str


class TimedJob(Job):
    """A ``Job`` that notes when each page of events reached its history (nothing else changes)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.arrivals: list[tuple[float, Sequence[EventRecord]]] = []

    def ingest_events(self, records: Sequence[EventRecord]) -> int:
        kept = super().ingest_events(records)
        self.arrivals.append((time.time(), records))
        return kept

    def latencies(self) -> list[float]:
        decode = msgspec.json.Decoder(_Created).decode
        out = []
        for arrived, records in self.arrivals:
            for record in records:
                event = decode(record.document)
                if event.type == TICK:
                    out.append(arrived - datetime.fromisoformat(event.created_at.replace("Z", "+00:00")).timestamp())
        return out


async def scenario(url: str, recording: Path, jobs: int) -> tuple[list[TimedJob], float, float]:
    """Create the jobs, follow each with a ``Job``, start them; returns the jobs, wall time and CPU seconds."""
    body = {"metadata": {"local_executor": "replay", "recording": str(recording)}, "auto_start": False}
    async with AsyncSynthClient(url, API_KEY) as client:
        ids = [str((await client.create_job(SFT, body))["job_id"]) for _ in range(jobs)]
        followers = [TimedJob(job_id, "sft", client, endpoints=SFT) for job_id in ids]
        for job in followers:
            job.start_monitoring()
        while any(job.stream_mode != "sse" for job in followers):  # every stream connected first
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        cpu, started = time.process_time(), time.monotonic()
        for job_id in ids:
            await client.request("POST", f"{SFT.create}/{job_id}/start", json={})
        await asyncio.gather(*(job.wait(timeout=600) for job in followers))
        return followers, time.monotonic() - started, time.process_time() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--rate", type=float, default=500.0, help="events per second per job")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each recorded job")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="synth-nb-follow-") as folder:
        tmp = Path(folder)
        proc, url = start_backend_process(tmp / "backend", API_KEY, recordings=True)
        try:
            recording = tmp / "ticks.jsonl"
            offered = write_recording(recording, args.rate, args.seconds)
            backend_cpu = process_cpu_seconds(proc.pid)
            followers, wall, cpu = asyncio.run(scenario(url, recording, args.jobs))
            backend_cpu = process_cpu_seconds(proc.pid) - backend_cpu
        finally:
            stop_backend_process(proc)
    latencies = sorted(x for job in followers for x in job.latencies())
    delivered = len(latencies)
    p50 = latencies[len(latencies) // 2] * 1000 if latencies else float("nan")
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))] * 1000 if latencies else float("nan")
    print(f"{args.jobs} jobs x {args.rate:g} events/s, one synth-nb Job follower each: delivered {delivered:,} of "
          f"{offered * args.jobs:,} in {wall:.1f} s; latency insert->history p50 {p50:.0f} ms, p95 {p95:.0f} ms "
          f"(anchor {ANCHOR_P95_MS:,} ms, goal <= {GOAL_P95_MS} ms); follower CPU {cpu:.1f} s = "
          f"{cpu / max(delivered, 1) * 1e6:.0f} us per event; backend CPU {backend_cpu / max(delivered, 1) * 1e6:.0f} us "
          "per event", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
