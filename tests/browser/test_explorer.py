"""The prompt-learning explorer and the comparison of runs in a real JupyterLab, before and after save →
close → reopen.

The explorer belongs to a real GEPA job (the bundled banking task app, scored by the deterministic keyword
policy) on an embedded backend started by the test; the comparison puts it beside an SFT run replayed from
the bundled recording. Both outputs are plain HTML: a Pareto point is a link (mouse or keyboard) that
opens its candidate's prompt, and a radio group switches the comparison's progress axis.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

pytestmark = pytest.mark.browser

TASK_APP_KEY = "sk_env_explorer_" + "e" * 20

SETUP = """\
import json
from pathlib import Path
import synth_nb
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job

backend = json.loads(Path("backend.json").read_text())
client = AsyncSynthClient(backend["url"], backend["key"])

async def submit(flow, body, algorithm=None):
    endpoints = get_flow(flow).endpoints
    doc = await client.create_job(endpoints, body)
    job_id = doc.get("id") or doc.get("job_id")
    if endpoints.start:
        await client.start(endpoints, job_id)
    job = Job(job_id, flow, client, endpoints=endpoints, algorithm=algorithm, poll_interval=0.5)
    await job.wait(600)
    return job

gepa = await submit("prompt_learning", json.loads(Path("gepa_body.json").read_text()), "gepa")
sft = await submit("sft", {"metadata": {"local_executor": "replay", "recording": "sft"}})
print("jobs", gepa.status, sft.status)
"""


def gepa_body(task_app_url: str) -> dict[str, Any]:
    return {"algorithm": "gepa", "metadata": {}, "config_body": {"prompt_learning": {
        "algorithm": "gepa", "task_app_url": task_app_url, "task_app_api_key": TASK_APP_KEY, "task_app_id": "banking",
        "initial_prompt": {"id": "banking_intents", "name": "Banking intent classification", "messages": [
            {"role": "system", "order": 0, "pattern": "You are an expert banking assistant that classifies customer "
                                                      "queries into banking intents using the `banking_classify` tool."},
            {"role": "user", "order": 1, "pattern": "Customer Query: {query}\n\nAvailable Intents:\n{available_intents}"}],
            "wildcards": {"query": "REQUIRED", "available_intents": "REQUIRED"}},
        "policy": {"provider": "openai", "model": "gpt-4.1-mini", "temperature": 0.0, "local_policy": "keyword"},
        "gepa": {"env_name": "banking", "rng_seed": 0,
                 "rollout": {"budget": 200, "max_concurrent": 8, "minibatch_size": 8},
                 "evaluation": {"train_seeds": list(range(16)), "val_seeds": list(range(80, 96)),
                                "test_pool": list(range(16)), "validation_top_k": 2}},
    }}}


def _open_prompt_with_the_keyboard_and_the_mouse(lab: Any, cell: Any) -> None:
    explorer = cell.locator(".synth-explorer")
    points = explorer.locator("svg a[data-candidate]")
    assert points.count() >= 4  # two plots, at least baseline and one more candidate each
    best = explorer.locator("svg a[data-candidate]:has(.pt.best)").first
    index = best.get_attribute("data-candidate")
    target = explorer.locator(f"[id$='-c{index}']")
    assert not target.is_visible()  # inside a closed <details>
    best.focus()
    lab.page.keyboard.press("Enter")
    target.wait_for(state="visible", timeout=10_000)
    assert explorer.locator(f"details:has([id$='-c{index}'])").get_attribute("open") is not None
    lab.screenshot("explorer-opened-by-keyboard", explorer)
    other = explorer.locator("svg a[data-candidate]:has(.pt.base)").first
    base = other.get_attribute("data-candidate")
    other.click()
    explorer.locator(f"[id$='-c{base}']").wait_for(state="visible", timeout=10_000)


def _switch_axis(lab: Any, cell: Any) -> None:
    compare = cell.locator(".synth-compare")
    steps, rollouts = compare.locator("figure.fig-steps"), compare.locator("figure.fig-rollouts")
    assert steps.is_visible() and not rollouts.is_visible()
    radio = compare.locator("input[value='rollouts']")
    radio.focus()
    lab.page.keyboard.press("Space")
    rollouts.wait_for(state="visible", timeout=10_000)
    assert not steps.is_visible() and radio.is_checked()
    compare.locator("label", has_text="wall time").click()
    compare.locator("figure.fig-seconds").wait_for(state="visible", timeout=10_000)
    lab.screenshot("comparison-wall-time", compare)


def test_explorer_and_comparison_work_and_survive_save_close_reopen(lab: Any) -> None:
    from synth_nb.local import start_backend
    from synth_nb.local.examples import start_task_app

    task_app = start_task_app("banking", api_key=TASK_APP_KEY)
    try:
        with start_backend(executor_options={"replay": {"speed": 20}}) as backend:
            _walkthrough(lab, backend, task_app.url)
    finally:
        task_app.stop()


def _walkthrough(lab: Any, backend: Any, task_app_url: str) -> None:
    (lab.folder / "backend.json").write_text(json.dumps({"url": backend.url + "/api", "key": backend.api_key}))
    (lab.folder / "gepa_body.json").write_text(json.dumps(gepa_body(task_app_url)))
    lab.write_notebook("explorer.ipynb", [SETUP, "gepa.explorer()", "synth_nb.compare([gepa, sft])"])
    lab.open("explorer.ipynb")
    lab.run_cell(0, timeout=300)
    lab.wait_output(0, "jobs succeeded succeeded", 60)
    lab.run_cell(1)
    lab.run_cell(2, timeout=120)
    explorer_cell, compare_cell = lab.cell(1), lab.cell(2)
    explorer_cell.locator(".synth-explorer").wait_for()
    compare_cell.locator(".synth-compare img").first.wait_for()
    _open_prompt_with_the_keyboard_and_the_mouse(lab, explorer_cell)
    _switch_axis(lab, compare_cell)
    lab.save()

    saved = json.loads((lab.folder / "explorer.ipynb").read_text())
    html = ["".join(o["data"]["text/html"]) for c in saved["cells"] for o in c.get("outputs", [])
            if "text/html" in o.get("data", {})]
    assert any("synth-explorer" in h for h in html) and any("synth-compare" in h for h in html)
    text = json.dumps(saved)
    assert backend.api_key not in text and TASK_APP_KEY not in text

    lab.shutdown_kernels()  # close: nothing is left running behind the saved outputs
    lab.page.goto("about:blank")
    time.sleep(0.5)
    lab.open("explorer.ipynb")
    explorer_cell, compare_cell = lab.cell(1), lab.cell(2)
    explorer_cell.locator(".synth-explorer").wait_for(timeout=60_000)
    compare_cell.locator(".synth-compare img").first.wait_for(timeout=60_000)
    lab.screenshot("reopened", explorer_cell)
    _open_prompt_with_the_keyboard_and_the_mouse(lab, explorer_cell)
    _switch_axis(lab, compare_cell)
