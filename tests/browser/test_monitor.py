"""The monitor panel in a real JupyterLab: live chart while other cells run, Cancel, reattach, result files.

Cancel is pressed on a real GEPA job (the bundled banking task app scored by the deterministic keyword
policy) running on the embedded local backend, so the confirmed ``cancelled`` comes from a job that was
really computing; the other steps replay recordings.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.browser

SETUP = """\
import json
from pathlib import Path
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job, attach
from synth_nb.notebook.show import show_job

backend = json.loads(Path("backend.json").read_text())
client = AsyncSynthClient(backend["url"], backend["key"])

async def replay(recording, flow="sft"):
    endpoints = get_flow(flow).endpoints
    doc = await client.create_job(endpoints, {"metadata": {"local_executor": "replay", "recording": recording}})
    await client.start(endpoints, doc["id"])
    return Job(doc["id"], flow, client, endpoints=endpoints, poll_interval=0.5)

async def gepa():
    endpoints = get_flow("prompt_learning").endpoints
    doc = await client.create_job(endpoints, json.loads(Path("gepa_body.json").read_text()))
    Path("gepa_job_id.txt").write_text(doc["id"])
    return Job(doc["id"], "prompt_learning", client, endpoints=endpoints, algorithm="gepa", poll_interval=0.5)

print("setup ok")
"""

TASK_APP_KEY = "sk_env_browser_" + "t" * 20


def gepa_body(task_app_url: str) -> dict[str, Any]:
    """A GEPA job on the banking task app with the keyword policy and a budget it cannot finish in the test."""
    return {"algorithm": "gepa", "metadata": {}, "config_body": {"prompt_learning": {
        "algorithm": "gepa", "task_app_url": task_app_url, "task_app_api_key": TASK_APP_KEY,
        "task_app_id": "banking",
        "initial_prompt": {"id": "banking_intents", "name": "Banking intent classification", "messages": [
            {"role": "system", "order": 0, "pattern": "Classify the customer query into one banking intent "
                                                      "using the `banking_classify` tool."},
            {"role": "user", "order": 1, "pattern": "Customer Query: {query}\n\nAvailable Intents:\n"
                                                    "{available_intents}"}],
            "wildcards": {"query": "REQUIRED", "available_intents": "REQUIRED"}},
        "policy": {"provider": "openai", "model": "gpt-4.1-mini", "temperature": 0.0, "local_policy": "keyword"},
        "gepa": {"env_name": "banking", "rng_seed": 0,
                 "rollout": {"budget": 1_000_000, "max_concurrent": 4, "minibatch_size": 4},
                 "evaluation": {"train_seeds": list(range(16)), "val_seeds": list(range(80, 96)),
                                "test_pool": list(range(8)), "validation_top_k": 2}},
    }}}


def backend_status(backend: Any, job_id: str) -> dict[str, Any]:
    """The job's status document straight from the backend (not through the notebook)."""
    response = httpx.get(f"{backend.url}/api/prompt-learning/online/jobs/{job_id}",
                         headers={"Authorization": f"Bearer {backend.api_key}"}, timeout=30)
    response.raise_for_status()
    return dict(response.json())


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


def _cells(folder: Path) -> list[str]:
    recs = {
        "live": sft_recording(folder / "live.jsonl", steps=240, seconds=30),
        "pl": pl_recording(folder / "pl.jsonl", trials=12, seconds=3),
    }
    return [
        SETUP,
        f"job = await replay({recs['live']!r})\nPath('job_id.txt').write_text(job.id)\npanel = show_job(job)",
        "import time\nprint('other cell ran at', time.strftime('%X'))",
        "job2 = await gepa()\npanel2 = show_job(job2)",
        "job3 = await attach(Path('job_id.txt').read_text(), client, {'sft': get_flow('sft').endpoints})\npanel3 = show_job(job3)\n"
        "print('reattached with', len(job3.metrics), 'metric points')",
        f"job4 = await replay({recs['pl']!r}, 'prompt_learning')\npanel4 = show_job(job4)\nawait panel4",
    ]


def _chart_src(lab, index: int) -> str | None:
    img = lab.cell(index).locator(".jp-OutputArea-output img")
    return img.first.get_attribute("src") if img.count() else None


def _status(lab, index: int, status: str, timeout: float = 60.0) -> None:
    lab.cell(index).scroll_into_view_if_needed()
    lab.cell(index).locator(f".synth-monitor[data-status='{status}']").wait_for(timeout=timeout * 1000)


def test_live_chart_cancel_reattach_and_export(lab) -> None:
    from synth_nb.local import start_backend
    from synth_nb.local.examples import start_task_app

    task_app = start_task_app("banking", api_key=TASK_APP_KEY)
    try:
        with start_backend(recordings_dir=lab.folder) as backend:  # replays read the recordings written there
            _run_monitor_walkthrough(lab, backend, task_app.url)
    finally:
        task_app.stop()


def _run_monitor_walkthrough(lab: Any, backend: Any, task_app_url: str) -> None:
    # the kernel reads the backend address from a file next to the notebook: no key in the notebook
    (lab.folder / "backend.json").write_text(json.dumps({"url": backend.url + "/api", "key": backend.api_key}))
    (lab.folder / "gepa_body.json").write_text(json.dumps(gepa_body(task_app_url)))
    lab.write_notebook("monitor.ipynb", _cells(lab.folder))
    lab.open("monitor.ipynb")
    lab.run_cell(0)
    lab.wait_output(0, "setup ok", 60)

    # 1. a replayed job: the chart image changes in place while another cell runs
    lab.run_cell(1)
    _status(lab, 1, "running", 30)
    seen: set[str] = set()
    other_ran = False
    deadline = time.monotonic() + 25
    while time.monotonic() < deadline and (len(seen) < 4 or not other_ran):
        src = _chart_src(lab, 1)
        if src:
            seen.add(src)
        if len(seen) == 2 and not other_ran:
            lab.run_cell(2)
            lab.wait_output(2, "other cell ran", 20)
            other_ran = True
        time.sleep(0.7)
    lab.screenshot("live-chart", lab.cell(1))
    assert other_ran
    assert len(seen) >= 3, f"chart changed only {len(seen)} times"
    assert lab.cell(1).locator(".jp-OutputArea-output img").count() == 1  # one output, updated in place

    # 2. Cancel on a real GEPA job that is computing shows the backend-confirmed terminal state
    lab.run_cell(3)
    _status(lab, 3, "running", 60)
    gepa_id = (lab.folder / "gepa_job_id.txt").read_text()
    _wait_for_rollouts(backend, gepa_id)
    lab.cell(3).locator("button.synth-cancel").click()
    lab.cell(3).locator("button.synth-confirm-cancel").click()  # Cancel asks first
    _status(lab, 3, "cancelled", 120)
    lab.wait_output(3, "cancelled by the panel's Cancel button", 60)  # the stop reason the panel ends on
    lab.screenshot("cancelled", lab.cell(3))
    doc = backend_status(backend, gepa_id)
    assert (doc["status"], doc["executor"], doc["cancel_requested"]) == ("cancelled", "gepa", True)

    # 3. restart the kernel and re-attach by id: the whole history comes back
    _status(lab, 1, "succeeded", 60)
    # do not return the command's promise: it resolves only after the dialog is answered
    lab.page.evaluate("() => { window.jupyterapp.commands.execute('kernelmenu:restart'); }")
    lab.page.locator(".jp-Dialog-button.jp-mod-accept").click()
    time.sleep(1.0)
    lab.wait_idle()
    lab.run_cell(0)
    lab.wait_output(0, "setup ok", 60)
    lab.run_cell(4)
    lab.wait_output(4, "reattached with 240 metric points", 60)
    _status(lab, 4, "succeeded", 60)
    lab.cell(4).locator(".synth-note", has_text="succeeded: ").wait_for(timeout=60_000)  # the final frame
    assert lab.cell(4).locator(".jp-OutputArea-output img").count() == 1
    lab.screenshot("reattached", lab.cell(4))

    # 4. a prompt-learning job's summary is rendered and, at the end, written into results/<job id>/ (no
    # results_folder is known for a job made by hand); the cell links the file
    lab.run_cell(5)
    _status(lab, 5, "succeeded", 60)
    job_id = lab.cell(5).locator(".synth-monitor").get_attribute("data-job-id")
    lab.wait_output(5, f"Wrote summary.md and summary_curve.png to results/{job_id}/", 30)
    link = lab.cell(5).get_by_role("link", name="summary.md")
    link.wait_for(timeout=30_000)
    lab.screenshot("export", lab.cell(5))
    assert (lab.folder / "results" / job_id / "summary.md").is_file()


def _wait_for_rollouts(backend: Any, job_id: str, timeout: float = 120.0) -> None:
    """Poll the backend until the GEPA job is running and has scored rollouts through the task app."""
    headers = {"Authorization": f"Bearer {backend.api_key}"}
    url = f"{backend.url}/api/prompt-learning/online/jobs/{job_id}/events"
    deadline = time.monotonic() + timeout
    types: set[str] = set()
    while time.monotonic() < deadline:
        body = httpx.get(url, headers=headers, params={"limit": 10000}, timeout=30).json()
        types = {e["type"] for e in (body["events"] if isinstance(body, dict) else body)}
        if backend_status(backend, job_id)["status"] == "running" and "prompt.learning.progress" in types:
            return
        time.sleep(0.5)
    raise AssertionError(f"GEPA job {job_id} did not start computing within {timeout} s (events: {sorted(types)})")
