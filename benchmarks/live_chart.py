"""What one redraw of ``--stream-format chart`` costs: a panel of the bundled GEPA recording, and an SFT panel of
10,000 loss points, at 80×24 and 120×40 (the board redraws at most twice a second, so this is the CPU a
followed job's chart takes per half second).

Run: ``python benchmarks/live_chart.py [--repeats 20]``. Printed on this branch, on a loaded 2-core machine:
GEPA 3–7 ms and SFT (10,000 points) 15–16 ms per redraw at either size; before (every point handed to
plotext) the SFT panel took 55–105 ms.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time

from rich.console import Console

from synth_nb.cli.live_chart import ChartBoard
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job, read_recording
from synth_nb.local.executors.replay import BUNDLED_DIR
from synth_nb.records import Event, MetricPoint

#: plotext draws no wider than the terminal it thinks it has: give it room for the 120-column panel
os.environ.setdefault("COLUMNS", "200")


def gepa_job() -> Job:
    job = Job("pl_bench", "prompt_learning", AsyncSynthClient("http://127.0.0.1:9", "k"),
              endpoints=get_flow("prompt_learning").endpoints, algorithm="gepa")
    seq = 0
    for entry in read_recording(BUNDLED_DIR / "gepa.jsonl"):
        payload = entry["payload"]
        if entry["kind"] == "event":
            seq += 1
            job.ingest_event(Event(seq=seq, type=payload["type"], message=payload.get("message", ""),
                                   data=payload.get("data") or {}))
        elif entry["kind"] == "metric":
            job.ingest_metric(MetricPoint(**payload))
    return job


def sft_job(points: int = 10_000) -> Job:
    job = Job("job_bench", "sft", AsyncSynthClient("http://127.0.0.1:9", "k"), endpoints=get_flow("sft").endpoints)
    for step in range(1, points + 1):
        job.ingest_metric(MetricPoint(name="train.loss", step=step, value=2.0 / (1 + step / 500)))
    return job


def redraw_ms(job: Job, width: int, height: int, repeats: int) -> float:
    board = ChartBoard([job], [], out=io.StringIO())
    board.console = Console(file=io.StringIO(), force_terminal=True, width=width, height=height)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        board.console.print(board._render())
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    for label, job in (("GEPA recording", gepa_job()), ("SFT, 10,000 points", sft_job())):
        for width, height in ((80, 24), (120, 40)):
            print(f"{label} at {width}x{height}: {redraw_ms(job, width, height, args.repeats):.1f} ms per redraw "
                  f"(median of {args.repeats})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
