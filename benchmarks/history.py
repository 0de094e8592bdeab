"""Client history figures: bytes held per event / metric point, attach time and peak RSS at 100k and 1M.

A job with N stored events and N/2 metric points (two names) is written straight into the local
backend's SQLite database, the backend serves it from a separate process, and each measurement attaches
to it from a fresh child process over HTTP:
  * ``current``: ``Job.refresh()``, the library's own attach path
  * ``pydantic``: a copy of the previous representation (one pydantic model per record, a set of seqs,
    pages validated by pydantic), kept here to compare against
For each it prints attach seconds, peak RSS of the child, and bytes held per record (tracemalloc, in a
separate child, at the smaller sizes), then the before/after ratios. Nothing is asserted.

    .venv/bin/python benchmarks/history.py [--sizes 100000 1000000] [--traced-max 100000]

Goals: <= 400 bytes per record, 1M-event attach <= 20 s and <= 500 MiB peak RSS, growth linear.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import gc
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import msgspec
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _local_jobs import start_backend_process, stop_backend_process  # noqa: E402

API_KEY = "sk_bench_0123456789abcdef"
JOB_ID = "job_history_bench"
METRIC_NAMES = ("train.reward_mean", "train.loss")
PAGE = 5000


# -- the stored job -------------------------------------------------------------------------------

def fill_backend(data_dir: Path, events: int, metrics: int) -> None:
    """A finished RL job with ``events`` events and ``metrics`` points, written in two transactions, each
    row as the backend stores it (with its served ``record``)."""
    from synth_nb.local.storage import Storage

    storage = Storage(data_dir)
    storage.create_job(JOB_ID, "rl", "replay", {"metadata": {"local_executor": "replay"}})
    storage.close()
    db = sqlite3.connect(data_dir / "backend.sqlite3", isolation_level=None)
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO events (job_id, seq, type, level, message, data, created_at, record)"
        " VALUES (?,?,?,?,?,?,?,?)",
        (_event_row(seq, events) for seq in range(2, events + 1)))
    db.executemany(
        "INSERT INTO metrics (job_id, name, step, value, data, created_at, record) VALUES (?,?,?,?,?,?,?)",
        (_metric_row(i) for i in range(metrics)))
    db.execute("UPDATE jobs SET status='succeeded', last_seq=? WHERE id=?", (events, JOB_ID))
    db.execute("COMMIT")
    db.close()


def _stamp(i: int) -> str:
    return f"2026-01-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.{i % 1_000_000:06d}Z"


def _event_row(seq: int, total: int) -> tuple[Any, ...]:
    from synth_nb.local.records import event_record

    reward = round(0.2 + 0.6 * seq / total, 4)
    data = json.dumps({"step": seq, "total_steps": total, "reward_mean": reward}, separators=(",", ":"))
    row = (JOB_ID, seq, "rl.train.step", "info", f"step {seq}/{total} reward_mean={reward}", data, _stamp(seq))
    return (*row, event_record(*row))


def _metric_row(i: int) -> tuple[Any, ...]:
    from synth_nb.local.records import metric_record

    step, name = divmod(i, len(METRIC_NAMES))
    row = (JOB_ID, METRIC_NAMES[name], step, 1.0 / (1 + step), "{}", _stamp(step))
    return (*row, metric_record(*row))


# -- the previous representation, for comparison --------------------------------------------------

class PydanticHistory:
    """The previous client history: a pydantic model per record, a set of seqs, pydantic-validated pages."""

    def __init__(self) -> None:
        from synth_nb.records import Event, MetricPoint

        class EventsPage(BaseModel):
            events: list[Event]

        self.page_model, self.metric_model = EventsPage, MetricPoint
        self.events: list[Any] = []
        self.metrics: list[Any] = []
        self.seqs: set[int] = set()
        self.metric_keys: set[tuple[str, int]] = set()
        self.last_seq = 0

    def ingest_event(self, event: Any) -> None:
        if event.seq in self.seqs:
            return
        self.seqs.add(event.seq)
        if event.seq > self.last_seq:
            self.last_seq = event.seq
            self.events.append(event)
        else:
            bisect.insort(self.events, event, key=lambda e: e.seq)

    def ingest_metric(self, point: Any) -> None:
        key = (point.name, point.step)
        if key in self.metric_keys:
            return
        self.metric_keys.add(key)
        if not self.metrics or (self.metrics[-1].step, self.metrics[-1].name) <= (point.step, point.name):
            self.metrics.append(point)
        else:
            bisect.insort(self.metrics, point, key=lambda m: (m.step, m.name))

    async def attach(self, client: Any) -> None:
        while True:
            response = await client.request("GET", f"/rl/jobs/{JOB_ID}/events",
                                            params={"since_seq": self.last_seq, "limit": PAGE})
            events = self.page_model.model_validate_json(response.content).events
            fresh = [e for e in events if e.seq > self.last_seq]
            for event in fresh:
                self.ingest_event(event)
            if not fresh:
                break
        cursor = -1
        while True:
            response = await client.request("GET", f"/rl/jobs/{JOB_ID}/metrics",
                                            params={"after_step": cursor, "limit": PAGE})
            page = [self.metric_model.model_validate(p) for p in response.json()["points"]]
            for point in page:
                self.ingest_metric(point)
            if not page:
                return
            top = max(p.step for p in page)
            cursor = top - 1 if top - 1 > cursor else top


# -- one measurement, in a child process ----------------------------------------------------------

class Cursor(msgspec.Struct):
    next_seq: int = 0
    has_more: bool = False


class Step(msgspec.Struct):
    step: int


class Points(msgspec.Struct):
    points: list[Step]


async def serve_only(client: Any) -> tuple[None, int, int]:
    """The backend alone: every page fetched, only its cursor read (what any client must wait for)."""
    since, events, metrics, cursor = 0, 0, 0, -1
    while True:
        page = msgspec.json.decode((await client.request("GET", f"/rl/jobs/{JOB_ID}/events", params={
            "since_seq": since, "limit": 10_000})).content, type=Cursor)
        events, since = events + page.next_seq - since, page.next_seq
        if not page.has_more:
            break
    while True:
        points = msgspec.json.decode((await client.request("GET", f"/rl/jobs/{JOB_ID}/metrics", params={
            "after_step": cursor, "limit": 10_000})).content, type=Points).points
        if not points:
            return None, events, metrics
        metrics += len(points)
        top = max(p.step for p in points)
        cursor = top - 1 if top - 1 > cursor else top


async def attach(url: str, representation: str) -> tuple[Any, int, int]:
    from synth_nb.client import AsyncSynthClient
    from synth_nb.flows import get_flow
    from synth_nb.job import Job

    async with AsyncSynthClient(url, API_KEY) as client:
        if representation == "backend":
            return await serve_only(client)
        if representation == "pydantic":
            old = PydanticHistory()
            await old.attach(client)
            return old, len(old.events), len(old.metrics)
        job = Job(JOB_ID, "rl", client, endpoints=get_flow("rl").endpoints)
        await job.refresh()
        return job, len(job.events), len(job.metrics)


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(url: str, representation: str, traced: bool) -> dict[str, Any]:
    import synth_nb.client  # noqa: F401 - imported before the baseline is taken
    import synth_nb.job  # noqa: F401

    gc.collect()
    rss_before = _peak_rss()
    if traced:
        tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0] if traced else 0
    started, cpu = time.perf_counter(), time.process_time()
    history, events, metrics = asyncio.run(attach(url, representation))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    gc.collect()
    result: dict[str, Any] = {"seconds": seconds, "cpu": cpu, "events": events, "metrics": metrics,
                              "peak_rss": _peak_rss(), "rss_growth": _peak_rss() - rss_before}
    if traced:
        result["bytes_per_record"] = (tracemalloc.get_traced_memory()[0] - before) / max(1, events + metrics)
        top = tracemalloc.take_snapshot().statistics("lineno")[:5]
        result["top"] = [f"{s.size / 2**20:7.1f} MiB  {s.traceback}" for s in top]
    if representation == "current":
        result["event_bytes"] = history.events.nbytes / max(1, events)
        result["metric_bytes"] = history.metrics.nbytes / max(1, metrics)
    del history
    return result


def measure(url: str, representation: str, *, traced: bool = False) -> dict[str, Any]:
    args = [sys.executable, __file__, "--child", representation, "--url", url] + (["--traced"] if traced else [])
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


# -- the report -----------------------------------------------------------------------------------

def _cpu_seconds(pid: int) -> float:
    """CPU time a process has used (Linux ``/proc``; 0 elsewhere): load on a shared machine leaves it be."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured(url: str, representation: str, backend_pid: int, *, traced: bool = False) -> dict[str, Any]:
    """``measure`` plus the backend's CPU seconds while it ran."""
    before = _cpu_seconds(backend_pid)
    result = measure(url, representation, traced=traced)
    return {**result, "backend_cpu": _cpu_seconds(backend_pid) - before}


def bench_size(events: int, traced: bool, baseline: bool) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="synth-nb-history-") as folder:
        data_dir = Path(folder) / "backend"
        fill_backend(data_dir, events, events // 2)
        proc, url = start_backend_process(data_dir, API_KEY)
        try:
            reps = ("backend", "current", "pydantic") if baseline else ("backend", "current")
            results = {rep: measured(url, rep, proc.pid) for rep in reps}
            if traced:
                for rep in reps[1:]:
                    results[rep].update({k: v for k, v in measure(url, rep, traced=True).items()
                                         if k in ("bytes_per_record", "top")})
            return results
        finally:
            stop_backend_process(proc)


def report(events: int, results: dict[str, dict[str, Any]], show_top: bool) -> None:
    served = results["backend"]
    print(f"{events:>9,} events  backend alone (pages fetched, not parsed): {served['seconds']:6.1f} s, "
          f"backend CPU {served['backend_cpu']:5.1f} s ({served['events']:,} events + {served['metrics']:,} "
          "metric points)")
    for rep in ("current", "pydantic"):
        if rep not in results:
            continue
        r = results[rep]
        per = f"  {r['bytes_per_record']:5.0f} B/record (tracemalloc)" if "bytes_per_record" in r else ""
        print(f"{events:>9,} events  {rep:<9} attach {r['seconds']:6.1f} s (client CPU {r['cpu']:5.1f} s, "
              f"backend CPU {r['backend_cpu']:5.1f} s)  "
              f"peak RSS {r['peak_rss'] / 2**20:5.0f} MiB (+{r['rss_growth'] / 2**20:4.0f}){per}")
        if "event_bytes" in r:
            print(f"{'':>17}held by the columns: {r['event_bytes']:.0f} B/event, {r['metric_bytes']:.0f} B/metric point")
        if show_top and "top" in r:
            print("\n".join("      " + line for line in r["top"]))
    if "pydantic" in results:
        new, old = results["current"], results["pydantic"]
        ratios = [f"attach {old['seconds'] / new['seconds']:.1f}x faster",
                  f"client CPU {old['cpu'] / new['cpu']:.1f}x less",
                  f"RSS growth {old['rss_growth'] / max(1, new['rss_growth']):.1f}x less"]
        if "bytes_per_record" in new:
            ratios.append(f"{old['bytes_per_record'] / new['bytes_per_record']:.0f}x fewer bytes per record")
        print(f"{events:>9,} events  current vs pydantic: " + ", ".join(ratios))


def report_growth(sizes: list[int], runs: dict[int, dict[str, dict[str, Any]]]) -> None:
    small, large = min(sizes), max(sizes)
    if small == large:
        return
    a, b = runs[small]["current"], runs[large]["current"]
    print(f"growth {small:,} -> {large:,} events ({large / small:.0f}x): client CPU {b['cpu'] / a['cpu']:.1f}x, "
          f"RSS growth {b['rss_growth'] / max(1, a['rss_growth']):.1f}x, "
          f"bytes held per event {b['event_bytes'] / a['event_bytes']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--traced-max", type=int, default=100_000, help="largest size measured with tracemalloc")
    parser.add_argument("--baseline-max", type=int, default=1_000_000, help="largest size the baseline runs at")
    parser.add_argument("--top", action="store_true", help="print tracemalloc's top allocation sites")
    parser.add_argument("--child", choices=("backend", "current", "pydantic"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.url, args.child, args.traced)))
        return
    runs = {}
    for events in args.sizes:
        runs[events] = bench_size(events, traced=events <= args.traced_max, baseline=events <= args.baseline_max)
        report(events, runs[events], args.top)
    report_growth(args.sizes, runs)


if __name__ == "__main__":
    main()
