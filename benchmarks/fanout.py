"""Backend fan-out: many jobs writing events fast, each followed live over SSE, on one local backend.

The backend runs in a process of its own (its own GIL); replay jobs re-emit a recording with events
every ``1 / rate`` seconds, and the followers (aiohttp, in this process) read each job's
``/events/stream`` until it closes. For every scenario it prints events offered and delivered,
events lost or duplicated (by ``seq``), stream errors, and the latency from the backend's insert
(the event's ``created_at``) to its arrival at a follower (p50/p95).

Goals: 20 jobs x 500 events/s, one follower each, delivered in full with p95 <= 250 ms; 1 job x 100
followers with 0 errors. Before this work: 6,000 of the 10,000 events/s offered, p95 0.97 s.

Run: ``python benchmarks/fanout.py [--seconds 10]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import aiohttp
import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _local_jobs import start_backend_process, stop_backend_process  # noqa: E402

API_KEY = "sk_bench_fanout_0123456789abcdef"
#: SFT jobs wait for ``/start``, so every follower is connected before the first event
JOBS = "/learning/jobs"
TICK = "bench.tick"


@dataclass
class Follower:
    """What one SSE follower saw."""

    seqs: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    error: str | None = None

    @property
    def duplicates(self) -> int:
        return len(self.seqs) - len(set(self.seqs))


def write_recording(path: Path, rate: float, seconds: float) -> int:
    """A recorded SFT job with ``rate`` events per second for ``seconds``; returns the number of events."""
    count = int(rate * seconds)
    lines = [{"t": 0, "kind": "meta", "payload": {"flow": "sft"}},
             {"t": 0, "kind": "status", "payload": {"status": "running"}}]
    lines += [{"t": round(i / rate, 6), "kind": "event",
               "payload": {"type": TICK, "message": f"step {i}/{count} loss=0.41",
                           "data": {"step": i, "total_steps": count, "loss": 0.41}}} for i in range(count)]
    lines.append({"t": round(count / rate, 6), "kind": "status", "payload": {"status": "succeeded"}})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return count


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timestamp(created_at: str) -> float:
    return datetime.fromisoformat(created_at.replace("Z", "+00:00")).timestamp()


async def follow(session: aiohttp.ClientSession, url: str, job_id: str, seen: Follower) -> None:
    """Read the job's SSE stream to its end, recording each tick (frames split per chunk: cheap per event)."""
    decode = msgspec.json.Decoder().decode
    buffer = b""
    try:
        async with session.get(f"{url}/api{JOBS}/{job_id}/events/stream",
                               headers={"Accept": "text/event-stream"}) as response:
            response.raise_for_status()
            async for chunk in response.content.iter_any():
                arrived = time.time()
                *frames, buffer = (buffer + chunk).split(b"\n\n")
                for frame in frames:
                    at = frame.find(b"\ndata: ")
                    if at >= 0:
                        event = decode(frame[at + 7:])
                        if event["type"] == TICK:
                            seen.latencies.append(arrived - _timestamp(event["created_at"]))
                            seen.seqs.append(event["seq"])
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        seen.error = f"{type(exc).__name__}: {exc}"


async def scenario(url: str, recording: Path, jobs: int, followers: int) -> tuple[list[Follower], float]:
    """Create the jobs, connect the followers, start the jobs; returns what each follower saw and the wall time."""
    headers = {"Authorization": f"Bearer {API_KEY}"}
    body = {"metadata": {"local_executor": "replay", "recording": str(recording)}, "auto_start": False}
    timeout = aiohttp.ClientTimeout(total=None, sock_read=60)
    async with aiohttp.ClientSession(headers=headers, timeout=timeout,
                                     connector=aiohttp.TCPConnector(limit=0)) as session:
        job_ids = []
        for _ in range(jobs):
            async with session.post(f"{url}/api{JOBS}", json=body) as response:
                response.raise_for_status()
                job_ids.append((await response.json())["job_id"])
        seen = [Follower() for _ in range(jobs * followers)]
        tasks = [asyncio.create_task(follow(session, url, job_ids[i // followers], seen[i])) for i in range(len(seen))]
        await asyncio.sleep(0.5 + len(seen) / 200)  # every follower connected before the first event
        started = time.monotonic()
        for job_id in job_ids:
            async with session.post(f"{url}/api{JOBS}/{job_id}/start", json={}) as response:
                response.raise_for_status()
        await asyncio.gather(*tasks)
    return seen, time.monotonic() - started


def report(label: str, seen: list[Follower], offered: int, seconds: float, wall: float, cpu: float) -> None:
    latencies = sorted(x for f in seen for x in f.latencies)
    delivered = sum(len(set(f.seqs)) for f in seen)
    lost = sum(max(0, offered - len(set(f.seqs))) for f in seen)
    errors = [f.error for f in seen if f.error]
    p50 = latencies[len(latencies) // 2] if latencies else float("nan")
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))] if latencies else float("nan")
    print(f"{label}: delivered {delivered:,} of {offered * len(seen):,} events "
          f"in {wall:.1f} s ({delivered / wall:,.0f}/s; {offered * len(seen) / seconds:,.0f}/s offered); lost {lost}, "
          f"duplicated {sum(f.duplicates for f in seen)}, stream errors {len(errors)}; "
          f"latency p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms; backend CPU {cpu:.1f} s = "
          f"{cpu / max(delivered, 1) * 1e6:.0f} us per event delivered", flush=True)
    for error in errors[:3]:
        print(f"  error: {error}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each recorded job")
    args = parser.parse_args()
    scenarios = [("20 jobs x 500 events/s, 1 follower each", 20, 500.0, 1),
                 ("1 job x 100 followers, 100 events/s", 1, 100.0, 100),
                 ("1 job x 100 followers, 500 events/s", 1, 500.0, 100)]
    with tempfile.TemporaryDirectory(prefix="synth-nb-fanout-") as folder:
        tmp = Path(folder)
        proc, url = start_backend_process(tmp / "backend", API_KEY, recordings=True)
        try:
            for label, jobs, rate, followers in scenarios:
                recording = tmp / f"rate{rate:g}.jsonl"
                offered = write_recording(recording, rate, args.seconds)
                cpu = process_cpu_seconds(proc.pid)
                seen, wall = asyncio.run(scenario(url, recording, jobs, followers))
                report(label, seen, offered, args.seconds, wall, process_cpu_seconds(proc.pid) - cpu)
        finally:
            stop_backend_process(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
