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
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from pydantic import BaseModel

API_KEY = "sk_bench_0123456789abcdef"
JOB_ID = "job_history_bench"
METRIC_NAMES = ("train.reward_mean", "train.loss")
PAGE = 5000


# -- the stored job -------------------------------------------------------------------------------

def fill_backend(data_dir: Path, events: int, metrics: int) -> None:
    """A finished RL job with ``events`` events and ``metrics`` points, written in two transactions."""
    from synth_nb.local.storage import Storage

    storage = Storage(data_dir)
    storage.create_job(JOB_ID, "rl", "replay", {"metadata": {"local_executor": "replay"}})
    storage.close()
    db = sqlite3.connect(data_dir / "backend.sqlite3", isolation_level=None)
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO events (job_id, seq, type, level, message, data, created_at) VALUES (?,?,?,?,?,?,?)",
        (_event_row(seq, events) for seq in range(2, events + 1)))
    db.executemany(
        "INSERT INTO metrics (job_id, name, step, value, data, created_at) VALUES (?,?,?,?,?,?)",
        (_metric_row(i) for i in range(metrics)))
    db.execute("UPDATE jobs SET status='succeeded', last_seq=? WHERE id=?", (events, JOB_ID))
    db.execute("COMMIT")
    db.close()


def _stamp(i: int) -> str:
    return f"2026-01-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}.{i % 1_000_000:06d}Z"


def _event_row(seq: int, total: int) -> tuple[Any, ...]:
    reward = round(0.2 + 0.6 * seq / total, 4)
    data = json.dumps({"step": seq, "total_steps": total, "reward_mean": reward})
    return (JOB_ID, seq, "rl.train.step", "info", f"step {seq}/{total} reward_mean={reward}", data, _stamp(seq))


def _metric_row(i: int) -> tuple[Any, ...]:
    step, name = divmod(i, len(METRIC_NAMES))
    return (JOB_ID, METRIC_NAMES[name], step, 1.0 / (1 + step), "{}", _stamp(step))


def start_backend_process(data_dir: Path) -> tuple[subprocess.Popen[str], str]:
    code = (
        "import sys\n"
        "from synth_nb.local import start_backend\n"
        f"b = start_backend(port=0, data_dir={str(data_dir)!r}, api_key={API_KEY!r})\n"
        "print(b.url, flush=True)\n"
        "sys.stdin.read()\n"
        "b.stop()\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit("could not start the local backend")
    return proc, url


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

async def attach(url: str, representation: str) -> tuple[Any, int, int]:
    from synth_nb.client import AsyncSynthClient
    from synth_nb.job import Job

    async with AsyncSynthClient(url, API_KEY) as client:
        if representation == "pydantic":
            old = PydanticHistory()
            await old.attach(client)
            return old, len(old.events), len(old.metrics)
        job = Job(JOB_ID, "rl", client)
        await job.refresh()
        return job, len(job.events), len(job.metrics)


def child(url: str, representation: str, traced: bool) -> dict[str, Any]:
    import synth_nb.client  # noqa: F401 - imported before the baseline is taken
    import synth_nb.job  # noqa: F401

    gc.collect()
    if traced:
        tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0] if traced else 0
    started, cpu = time.perf_counter(), time.process_time()
    history, events, metrics = asyncio.run(attach(url, representation))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    gc.collect()
    result: dict[str, Any] = {"seconds": seconds, "cpu": cpu, "events": events, "metrics": metrics,
                              "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    if traced:
        result["bytes_per_record"] = (tracemalloc.get_traced_memory()[0] - before) / max(1, events + metrics)
        top = tracemalloc.take_snapshot().statistics("lineno")[:5]
        result["top"] = [f"{s.size / 2**20:7.1f} MiB  {s.traceback}" for s in top]
    del history
    return result


def measure(url: str, representation: str, *, traced: bool) -> dict[str, Any]:
    args = [sys.executable, __file__, "--child", representation, "--url", url] + (["--traced"] if traced else [])
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


# -- the report -----------------------------------------------------------------------------------

def bench_size(events: int, traced: bool, baseline: bool) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="synth-nb-history-") as folder:
        data_dir = Path(folder) / "backend"
        fill_backend(data_dir, events, events // 2)
        proc, url = start_backend_process(data_dir)
        try:
            reps = ("current", "pydantic") if baseline else ("current",)
            results = {rep: measure(url, rep, traced=False) for rep in reps}
            if traced:
                for rep in reps:
                    results[rep].update({k: v for k, v in measure(url, rep, traced=True).items()
                                         if k in ("bytes_per_record", "top")})
            return results
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def report(events: int, results: dict[str, dict[str, Any]], show_top: bool) -> None:
    for rep, r in results.items():
        per = f"{r['bytes_per_record']:6.0f} B/record" if "bytes_per_record" in r else " " * 15
        print(f"{events:>9,} events {rep:<9} attach {r['seconds']:6.1f} s  peak RSS {r['peak_rss'] / 2**20:7.0f} MiB"
              f"  {per}  ({r['events']:,} events + {r['metrics']:,} metric points)")
        if show_top and "top" in r:
            print("\n".join("      " + line for line in r["top"]))
    if "pydantic" in results:
        new, old = results["current"], results["pydantic"]
        ratios = [f"attach {old['seconds'] / new['seconds']:.1f}x faster",
                  f"peak RSS {old['peak_rss'] / new['peak_rss']:.1f}x lower"]
        if "bytes_per_record" in new:
            ratios.append(f"{old['bytes_per_record'] / new['bytes_per_record']:.1f}x fewer bytes per record")
        print(f"{events:>9,} events current vs pydantic: " + ", ".join(ratios))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--traced-max", type=int, default=100_000, help="largest size measured with tracemalloc")
    parser.add_argument("--baseline-max", type=int, default=1_000_000, help="largest size the baseline runs at")
    parser.add_argument("--top", action="store_true", help="print tracemalloc's top allocation sites")
    parser.add_argument("--child", choices=("current", "pydantic"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.url, args.child, args.traced)))
        return
    for events in args.sizes:
        results = bench_size(events, traced=events <= args.traced_max, baseline=events <= args.baseline_max)
        report(events, results, args.top)


if __name__ == "__main__":
    main()
