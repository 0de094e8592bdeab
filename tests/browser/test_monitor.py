"""The monitor panel in a real JupyterLab: live chart while other cells run, Cancel, reattach, export."""

from __future__ import annotations

import json
import time
from pathlib import Path

import nbformat
import pytest
from _jlab import VISIBLE_NOTEBOOK, cell, chromium_page, open_notebook, run_cell, running_lab, screenshot
from _jlab import wait_kernel_idle as wait_idle

pytestmark = pytest.mark.browser

SETUP = """\
import os
from pathlib import Path
from synth_nb.client import AsyncSynthClient
from synth_nb.job import Job, attach
from synth_nb.notebook.panel import show_job

client = AsyncSynthClient(os.environ["SYNTH_NB_TEST_BACKEND"], os.environ["SYNTH_API_KEY"])

async def replay(recording, flow="sft"):
    doc = await client.create_job(flow, {"metadata": {"local_executor": "replay", "recording": recording}})
    if flow == "sft":
        await client.start(flow, doc["id"])
    return Job(doc["id"], flow, client, poll_interval=0.5)

print("setup ok")
"""


def _write(path: Path, lines: list[tuple[float, str, dict]]) -> str:
    path.write_text("".join(json.dumps({"t": t, "kind": k, "payload": p}) + "\n" for t, k, p in lines))
    return str(path)


def sft_recording(path: Path, *, steps: int, seconds: float) -> str:
    lines: list[tuple[float, str, dict]] = [(0, "meta", {"flow": "sft"}), (0, "status", {"status": "running"})]
    for s in range(1, steps + 1):
        t = seconds * s / steps
        lines.append((t, "metric", {"name": "train.loss", "step": s, "value": 2.0 / (1 + s / 20)}))
        lines.append((t, "event", {"type": "sft.training.step", "message": f"step {s}",
                                   "data": {"step": s, "total_steps": steps}}))
    lines.append((seconds, "status", {"status": "succeeded", "fine_tuned_model": "ft:local:browser"}))
    return _write(path, lines)


def pl_recording(path: Path, *, trials: int, seconds: float) -> str:
    lines: list[tuple[float, str, dict]] = [
        (0, "meta", {"flow": "prompt_learning"}), (0, "status", {"status": "running"}),
        (0.1, "event", {"type": "prompt.learning.validation.summary", "message": "baseline",
                        "data": {"baseline": {"accuracy": 0.4}, "results": []}}),
    ]
    for k in range(1, trials + 1):
        t = seconds * k / trials
        lines.append((t, "event", {"type": "prompt.learning.trial.results", "message": f"trial {k}",
                                   "data": {"mean": 0.4 + 0.4 * k / trials, "completed": k, "total": trials}}))
        lines.append((t, "event", {"type": "prompt.learning.progress", "message": "progress",
                                   "data": {"rollouts_completed": 10 * k, "rollouts_total": 10 * trials}}))
    lines.append((seconds, "event", {"type": "prompt.learning.best.prompt", "message": "best",
                                     "data": {"best_score": 0.8, "best_prompt": {"sections": [
                                         {"role": "system", "content": "Classify the banking intent."}]}}}))
    lines.append((seconds, "status", {"status": "succeeded", "best_score": 0.8}))
    return _write(path, lines)


def _notebook(folder: Path) -> Path:
    recs = {
        "live": sft_recording(folder / "live.jsonl", steps=240, seconds=30),
        "long": sft_recording(folder / "long.jsonl", steps=20, seconds=900),
        "pl": pl_recording(folder / "pl.jsonl", trials=12, seconds=3),
    }
    sources = [
        SETUP,
        f"job = await replay({recs['live']!r})\nPath('job_id.txt').write_text(job.id)\npanel = show_job(job)",
        "import time\nprint('other cell ran at', time.strftime('%X'))",
        f"job2 = await replay({recs['long']!r})\npanel2 = show_job(job2)",
        "job3 = await attach(Path('job_id.txt').read_text(), client, flow='sft')\npanel3 = show_job(job3)\n"
        "print('reattached with', len(job3.metrics), 'metric points')",
        f"job4 = await replay({recs['pl']!r}, 'prompt_learning')\npanel4 = show_job(job4)\nawait panel4",
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    path = folder / "monitor.ipynb"
    nbformat.write(nb, path)
    return path


def _chart_src(page, index: int) -> str | None:
    img = cell(page, index).locator(".jp-OutputArea-output img").first
    return img.get_attribute("src") if img.count() else None


def _wait_text(page, index: int, text: str, timeout: float = 60.0) -> None:
    cell(page, index).locator(".jp-OutputArea", has_text=text).first.wait_for(timeout=timeout * 1000)


def test_live_chart_cancel_reattach_and_export(tmp_path: Path) -> None:
    from synth_nb.local import start_backend

    root = tmp_path / "nb"
    root.mkdir()
    _notebook(root)
    with start_backend() as backend, running_lab(root, tmp_path / "state", env={
        "SYNTH_NB_TEST_BACKEND": backend.url + "/api", "SYNTH_API_KEY": backend.api_key,
    }) as lab, chromium_page() as page:
        open_notebook(page, lab, "monitor.ipynb")
        run_cell(page, 0)
        _wait_text(page, 0, "setup ok", 90)

        # 1. a replayed job: the chart image changes in place while another cell runs
        run_cell(page, 1)
        _wait_text(page, 1, "sft", 30)
        seen: set[str] = set()
        deadline = time.monotonic() + 25
        other_ran = False
        while time.monotonic() < deadline and (len(seen) < 4 or not other_ran):
            src = _chart_src(page, 1)
            if src:
                seen.add(src)
            if len(seen) == 2 and not other_ran:
                run_cell(page, 2)
                _wait_text(page, 2, "other cell ran", 20)
                other_ran = True
            time.sleep(0.7)
        screenshot(page, "monitor_live_chart.png")
        assert other_ran
        assert len(seen) >= 3, f"chart changed only {len(seen)} times"
        assert cell(page, 1).locator(".jp-OutputArea-output img").count() == 1  # one output, updated in place

        # 2. Cancel on a running local job shows the backend-confirmed terminal state
        run_cell(page, 3)
        cancel = cell(page, 3).locator("button.synth-cancel")
        cancel.wait_for(timeout=30_000)
        _wait_text(page, 3, "running", 30)
        cancel.click()
        cell(page, 3).locator(".synth-monitor[data-status='cancelled']").wait_for(timeout=60_000)
        _wait_text(page, 3, "backend confirmed status cancelled", 30)
        screenshot(page, "monitor_cancelled.png")

        # 3. restart the kernel, re-attach by id: the whole history comes back
        cell(page, 1).locator(".synth-monitor[data-status='succeeded']").wait_for(timeout=60_000)
        page.evaluate("() => window.jupyterapp.commands.execute('kernelmenu:restart')")
        page.locator(".jp-Dialog-button.jp-mod-accept").click()
        time.sleep(1.0)
        wait_idle(page)
        run_cell(page, 0)
        _wait_text(page, 0, "setup ok", 60)
        run_cell(page, 4)
        _wait_text(page, 4, "reattached with 240 metric points", 60)
        cell(page, 4).locator(".synth-monitor[data-status='succeeded']").wait_for(timeout=60_000)
        assert cell(page, 4).locator(".jp-OutputArea-output img").count() == 1
        screenshot(page, "monitor_reattached.png")

        # 4. a prompt-learning job's summary is rendered and exported next to the notebook
        run_cell(page, 5)
        export = cell(page, 5).locator("button.synth-export")
        export.wait_for(timeout=60_000)
        cell(page, 5).locator(".synth-monitor[data-status='succeeded']").wait_for(timeout=60_000)
        export.click()
        _wait_text(page, 5, "Wrote summary.md", 30)
        cell(page, 5).scroll_into_view_if_needed()
        screenshot(page, "monitor_export.png")
        assert (root / "summary.md").is_file()
        assert page.locator(f"{VISIBLE_NOTEBOOK} .jp-OutputArea-output").count() > 0
