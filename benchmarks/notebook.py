"""Notebook monitor figures: chart redraw time, saved notebook size, trivial-cell latency while streaming.

Run: ``.venv/bin/python benchmarks/notebook.py`` (about a minute; starts its own kernels and local
backends on 127.0.0.1). Prints one line per figure; nothing is asserted here (tests assert behaviour).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

REDRAW_SIZES = (1_000, 10_000, 100_000)
SAVED_STEPS = 10_000
STREAM_EVENTS_PER_S = 100
STREAM_SECONDS = 20.0


def write_sft_recording(path: Path, *, steps: int, seconds: float, events_per_step: int = 0,
                        event_every: int = 100) -> Path:
    """A synthetic SFT recording: one train.loss point per step, progress events, a final status."""
    with path.open("w", encoding="utf-8") as out:
        def line(t: float, kind: str, payload: dict) -> None:
            out.write(json.dumps({"t": round(t, 4), "kind": kind, "payload": payload}) + "\n")

        line(0, "meta", {"flow": "sft"})
        line(0, "status", {"status": "running"})
        line(0, "event", {"type": "sft.training.started", "message": "training", "data": {"total_steps": steps}})
        for step in range(1, steps + 1):
            t = seconds * step / steps
            line(t, "metric", {"name": "train.loss", "step": step, "value": 2.5 / (1 + step / 200)})
            for k in range(events_per_step):
                line(t, "event", {"type": "sft.worker.alive" if k else "sft.training.step",
                                  "message": f"step {step}", "data": {"step": step, "total_steps": steps}})
            if step % event_every == 0:
                line(t, "event", {"type": "sft.training.step", "message": f"step {step}",
                                  "data": {"step": step, "total_steps": steps}})
                line(t, "metric", {"name": "val.loss", "step": step, "value": 2.7 / (1 + step / 200)})
        line(seconds, "status", {"status": "succeeded", "fine_tuned_model": "ft:local:bench"})
    return path


def bench_redraw() -> None:
    from synth_nb.notebook.chart import LiveChart

    for n in REDRAW_SIZES:
        chart = LiveChart("sft")
        for step in range(n):
            chart.add_metric(SimpleNamespace(name="train.loss", step=step, value=1.0 / (1 + step) + (step % 7) * 0.01))
        chart.render_png()  # warm fonts and caches
        times = []
        for _ in range(7):
            started = time.perf_counter()
            png = chart.render_png()
            times.append(time.perf_counter() - started)
        print(f"chart redraw {n:>7} points: median {1000 * statistics.median(times):6.1f} ms, "
              f"max {1000 * max(times):6.1f} ms, png {len(png) / 1024:.1f} KiB")


SETUP = """
from pathlib import Path
from synth_nb.local import start_backend
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job
from synth_nb.notebook.show import show_job

backend = start_backend(recordings_dir=Path({rec!r}).parent)  # replays may read recordings from there
client = AsyncSynthClient(backend.url + "/api", backend.api_key)
sft = get_flow("sft").endpoints
doc = await client.create_job(sft, {{"metadata": {{"local_executor": "replay", "recording": {rec!r}}}}})
await client.start(sft, doc["id"])
job = Job(doc["id"], "sft", client, endpoints=sft, poll_interval=0.5)
panel = show_job(job)
"""


def bench_saved_notebook(tmp: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    rec = write_sft_recording(tmp / "sft10k.jsonl", steps=SAVED_STEPS, seconds=8.0)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SETUP.format(rec=str(rec))),
                nbformat.v4.new_code_cell("await panel\njob.status, len(job.metrics)"),
                nbformat.v4.new_code_cell("backend.stop()")]
    started = time.perf_counter()
    NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp)}}).execute()
    path = tmp / "saved.ipynb"
    nbformat.write(nb, path)
    text = path.read_text()
    key_leaked = "sk_local_" in text
    result = nb.cells[1].outputs[-1]["data"]["text/plain"] if nb.cells[1].outputs else "?"
    print(f"saved notebook after a {SAVED_STEPS}-step replay: {path.stat().st_size / 1024:.1f} KiB "
          f"(result {result}, api key in file: {key_leaked}, run {time.perf_counter() - started:.1f} s)")


def bench_cell_latency(tmp: Path) -> None:
    from jupyter_client.manager import start_new_kernel

    steps = int(STREAM_EVENTS_PER_S * STREAM_SECONDS)
    rec = write_sft_recording(tmp / "stream.jsonl", steps=steps, seconds=STREAM_SECONDS, events_per_step=1,
                              event_every=10**9)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp))
    try:
        reply = kc.execute_interactive(SETUP.format(rec=str(rec)), timeout=60, output_hook=lambda msg: None)
        assert reply["content"]["status"] == "ok", reply["content"]
        time.sleep(2.0)  # let the stream reach its steady rate
        latencies = []
        deadline = time.monotonic() + STREAM_SECONDS - 5
        while time.monotonic() < deadline:
            started = time.perf_counter()
            kc.execute_interactive("x = 1 + 1", timeout=30, output_hook=lambda msg: None)
            latencies.append(time.perf_counter() - started)
            time.sleep(0.2)
        probe = kc.execute_interactive("print(job.status, len(job.events), panel.chart.redraws)", timeout=30,
                                       output_hook=lambda msg: print("  kernel says:", msg["content"].get("text", "").strip())
                                       if msg["msg_type"] == "stream" else None)
        assert probe["content"]["status"] == "ok"
        kc.execute_interactive("await panel\nbackend.stop()", timeout=120, output_hook=lambda msg: None)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    ms = sorted(1000 * x for x in latencies)
    print(f"trivial cell while streaming {STREAM_EVENTS_PER_S} events/s: median {statistics.median(ms):.1f} ms, "
          f"p95 {ms[int(0.95 * (len(ms) - 1))]:.1f} ms, max {ms[-1]:.1f} ms over {len(ms)} cells")


def main() -> int:
    bench_redraw()
    with tempfile.TemporaryDirectory(prefix="synth-nb-bench-") as folder:
        tmp = Path(folder)
        bench_saved_notebook(tmp)
        bench_cell_latency(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
