"""Kernel CPU of the live monitor panel: a real Jupyter kernel follows an SFT job streaming 100 events/s and
100 metric points/s, once with only a ``Job`` following it and once with the panel shown (status, events,
live chart); the backend runs in a process of its own. Prints each run's kernel CPU as a share of one core
over the job's run, and over the time it streams (10% to 85% of its run: the end's final frame, result files
and summary left out) (imports and fonts warmed first: a kernel pays them once), the panel's chart redraws and
what the last one took.

Anchor: 13.7% of a core with the panel (the ``Job`` alone 4.4%). Goal: <= 2% with the panel.

Run: ``python benchmarks/panel.py [--seconds 20] [--repeats 1]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _local_jobs import start_backend_process, stop_backend_process  # noqa: E402
from fanout import process_cpu_seconds  # noqa: E402
from notebook import write_sft_recording  # noqa: E402

API_KEY = "sk_bench_panel_0123456789abcdef"
RATE = 100
ANCHOR_PANEL, ANCHOR_JOB, GOAL = 13.7, 4.4, 2.0

SETUP = """
from types import SimpleNamespace
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job
from synth_nb.notebook.show import show_job
from synth_nb.notebook.chart import LiveChart
from synth_nb.notebook.controls import PanelControls
import ipywidgets

warm = LiveChart("sft")  # imports, fonts and caches: paid once per kernel, not part of following a job
warm.add_metric(SimpleNamespace(name="train.loss", step=1, value=1.0))
warm.render_png()

client = AsyncSynthClient({url!r}, {key!r})
sft = get_flow("sft").endpoints
doc = await client.create_job(sft, {{"metadata": {{"local_executor": "replay", "recording": {rec!r}}}}})
await client.start(sft, doc["id"])
job = Job(doc["id"], "sft", client, endpoints=sft)
"""
FOLLOW = {"job": "job.start_monitoring()", "panel": "panel = show_job(job)"}
END = {"job": "await job.wait()", "panel": "await panel"}
REPORT = ("print(len(job.events), len(job.metrics), "
          "panel.chart.redraws if 'panel' in globals() else 0, "
          "round(panel.chart.last_render_seconds * 1000) if 'panel' in globals() else 0)")


def run(url: str, recording: Path, mode: str, folder: Path, seconds: float) -> tuple[float, float, str]:
    """One kernel following one job: (kernel CPU as % of a core over the run, the same while the job streams,
    what the kernel reports). The second leaves out the start and the end (the final frame, the result files
    and the summary are drawn once, whatever the job's length), from 10% to 85% of the job's time."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(folder))
    said: list[str] = []

    def quiet(msg: dict) -> None:
        if msg["msg_type"] == "stream":
            said.append(msg["content"].get("text", "").strip())

    try:
        pid = km.provisioner.process.pid  # type: ignore[union-attr]
        reply = kc.execute_interactive(SETUP.format(url=url + "/api", key=API_KEY, rec=str(recording)),
                                       timeout=120, output_hook=quiet)
        assert reply["content"]["status"] == "ok", reply["content"]
        cpu, started = process_cpu_seconds(pid), time.monotonic()
        reply = kc.execute_interactive(FOLLOW[mode], timeout=600, output_hook=quiet)
        assert reply["content"]["status"] == "ok", reply["content"]
        time.sleep(max(0.0, started + 0.10 * seconds - time.monotonic()))
        live_cpu, live_started = process_cpu_seconds(pid), time.monotonic()
        time.sleep(max(0.0, started + 0.85 * seconds - time.monotonic()))
        live = 100 * (process_cpu_seconds(pid) - live_cpu) / (time.monotonic() - live_started)
        reply = kc.execute_interactive(END[mode], timeout=600, output_hook=quiet)
        assert reply["content"]["status"] == "ok", reply["content"]
        share = 100 * (process_cpu_seconds(pid) - cpu) / (time.monotonic() - started)
        kc.execute_interactive(REPORT, timeout=60, output_hook=quiet)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return share, live, said[-1] if said else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--repeats", type=int, default=1, help="runs of each mode (interleaved; medians printed)")
    args = parser.parse_args()
    shares: dict[str, list[float]] = {"job": [], "panel": []}
    streaming: dict[str, list[float]] = {"job": [], "panel": []}
    with tempfile.TemporaryDirectory(prefix="synth-nb-panel-") as name:
        folder = Path(name)
        steps = int(RATE * args.seconds)
        recording = write_sft_recording(folder / "stream.jsonl", steps=steps, seconds=args.seconds,
                                        events_per_step=1, event_every=10**9)
        proc, url = start_backend_process(folder / "backend", API_KEY, recordings=True)
        try:
            for _ in range(args.repeats):
                for mode in shares:
                    load = os.getloadavg()[0]
                    share, live, said = run(url, recording, mode, folder, args.seconds)
                    shares[mode].append(share)
                    streaming[mode].append(live)
                    print(f"  {mode}: {share:.1f}% of a core over the run, {live:.1f}% while it streams (events, "
                          f"metrics, redraws, last redraw ms: {said}; load {load:.1f}→{os.getloadavg()[0]:.1f})",
                          flush=True)
        finally:
            stop_backend_process(proc)
    job, panel = statistics.median(shares["job"]), statistics.median(shares["panel"])
    print(f"kernel CPU at {RATE} events/s: Job alone {job:.1f}% of a core (anchor {ANCHOR_JOB}%), with the live "
          f"panel {panel:.1f}% (anchor {ANCHOR_PANEL}%) over the whole run; while the job streams: Job alone "
          f"{statistics.median(streaming['job']):.1f}%, with the panel {statistics.median(streaming['panel']):.1f}% "
          f"(goal <= {GOAL:g}%)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
