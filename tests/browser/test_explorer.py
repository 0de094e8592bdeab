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

from .a11y_support import flush, notebook_shape
from .page_errors import PageErrors

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


def _focused(page: Any) -> dict[str, Any]:
    return dict(page.evaluate("""() => {
        const el = document.activeElement;
        const svg = el && el.closest && el.closest("svg.synth-pareto");
        return {point: el ? el.getAttribute("data-candidate") : null, order: el ? el.getAttribute("data-order") : null,
                plot: svg ? Array.from(document.querySelectorAll(".synth-explorer svg.synth-pareto")).indexOf(svg) : -1,
                id: el ? el.id : null, tag: el ? el.tagName : null};
    }"""))


def _open_prompt_with_the_keyboard_and_the_mouse(lab: Any, cell: Any, page: Any = None) -> None:
    """Skip link, one Tab stop per plot, arrows between points, Enter and a click open a prompt; in a
    notebook (no ``page`` given) no key reaches the notebook's shortcuts."""
    in_notebook = page is None
    page = page or lab.page
    shape_of = notebook_shape if in_notebook else (lambda _page: None)
    explorer = cell.locator(".synth-explorer")
    assert explorer.locator("svg a").count() == 0  # links in SVG break JupyterLab's link rewriting
    plots = explorer.locator("svg.synth-pareto")
    assert plots.count() == 2
    for k in range(2):  # a plot is one Tab stop: one point reachable, the others by arrow keys
        assert plots.nth(k).locator("g.point[data-candidate]").count() >= 2
        assert plots.nth(k).locator("g.point[tabindex='0']").count() == 1
    # the skip link is the first stop and jumps past the whole view
    skip = explorer.locator("a.skip")
    skip.focus()
    assert skip.is_visible()
    page.keyboard.press("Tab")
    assert _focused(page)["plot"] == 0
    page.keyboard.press("Tab")
    assert _focused(page)["plot"] == 1
    skip.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement && document.activeElement.id.endsWith('-end')")

    # arrows move between the points of a plot; notebook shortcuts do nothing while a point has focus
    explorer.locator("svg.synth-pareto").first.locator("g.point[tabindex='0']").focus()
    shape = shape_of(page)  # focusing an output makes its cell the active one
    page.keyboard.press("Home")
    assert _focused(page)["order"] == "0"
    page.keyboard.press("ArrowRight")
    assert _focused(page)["order"] == "1"
    page.keyboard.press("ArrowDown")
    assert _focused(page)["order"] == "2" or plots.first.locator("g.point").count() == 2
    for key in ["a", "b", "m", "y", "d", "d", "ArrowUp", "ArrowLeft", "Enter", "Escape"]:
        page.keyboard.press(key)
        if key == "Escape":  # Enter opened a prompt and moved the focus there; come back to the points
            plots.first.locator("g.point[tabindex='0']").focus()
    if in_notebook:
        flush(page)
    assert shape_of(page) == shape, "a key typed in the explorer reached the notebook"
    best = plots.first.locator("g.point:has(.pt.best)")
    index = best.get_attribute("data-candidate")
    target = explorer.locator(f"[id$='-c{index}']")
    page.keyboard.press("End")
    while _focused(page)["point"] != index:
        page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    target.wait_for(state="visible", timeout=10_000)
    assert explorer.locator(f"details:has([id$='-c{index}'])").get_attribute("open") is not None
    assert page.evaluate("() => document.activeElement.id").endswith(f"-c{index}")
    assert shape_of(page) == shape
    if in_notebook:
        lab.screenshot("explorer-opened-by-keyboard", explorer)
    other = plots.nth(1).locator("g.point:has(.pt.base)")
    base = other.get_attribute("data-candidate")
    other.click()
    explorer.locator(f"[id$='-c{base}']").wait_for(state="visible", timeout=10_000)
    assert other.get_attribute("tabindex") == "0"


def _switch_axis(lab: Any, cell: Any) -> None:
    page = lab.page
    compare = cell.locator(".synth-compare")
    steps, rollouts = compare.locator("figure.fig-steps"), compare.locator("figure.fig-rollouts")
    assert steps.is_visible() and not rollouts.is_visible()
    compare.locator("input[value='steps']").focus()
    shape = notebook_shape(page)
    page.keyboard.press("ArrowDown")  # the radio group's own key, not the notebook's "next cell"
    rollouts.wait_for(state="visible", timeout=10_000)
    assert not steps.is_visible() and compare.locator("input[value='rollouts']").is_checked()
    assert notebook_shape(page) == shape, "an arrow key in the radio group reached the notebook"
    page.keyboard.press("ArrowUp")
    steps.wait_for(state="visible", timeout=10_000)
    compare.locator("input[value='steps']").focus()
    page.keyboard.press("ArrowDown")
    rollouts.wait_for(state="visible", timeout=10_000)
    compare.locator("label", has_text="wall time").click()
    compare.locator("figure.fig-seconds").wait_for(state="visible", timeout=10_000)
    lab.screenshot("comparison-wall-time", compare)


def _outside_jupyter(lab: Any, saved: dict[str, Any]) -> None:
    """The saved outputs as nbconvert's HTML and as bare HTML in a page: clean, and the explorer works."""
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="basic").from_notebook_node(nbformat.reads(json.dumps(saved), as_version=4))
    bare = "".join("".join(o["data"]["text/html"]) for c in saved["cells"] for o in c.get("outputs", [])
                   if "text/html" in o.get("data", {}))
    for label, content in (("nbconvert", body), ("bare", bare)):
        page = lab.page.context.new_page()
        errors = PageErrors(page)
        try:
            page.set_content(f"<!doctype html><html><head><meta charset='utf-8'></head><body>{content}</body></html>")
            _open_prompt_with_the_keyboard_and_the_mouse(lab, page.locator("body"), page)
            errors.assert_clean(where=label)
        finally:
            page.close()


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
    lab.assert_clean(where="explorer and comparison drawn")
    # every score says what it was measured on, and "best" says how it was chosen
    shown = explorer_cell.locator(".synth-explorer").inner_text()
    assert "the highest search score, measured on the validation seeds" in shown
    assert "Search score (validation seeds)" in shown and "Held-out score (unseen seeds)" in shown
    compared = compare_cell.inner_text()  # each score beside what it was measured on
    assert "Best measured on" in compared and "Held-out measured on" in compared and "Why it stopped" in compared
    _open_prompt_with_the_keyboard_and_the_mouse(lab, explorer_cell)
    _switch_axis(lab, compare_cell)
    lab.save()

    saved = json.loads((lab.folder / "explorer.ipynb").read_text())
    html = ["".join(o["data"]["text/html"]) for c in saved["cells"] for o in c.get("outputs", [])
            if "text/html" in o.get("data", {})]
    assert any("synth-explorer" in h for h in html) and any("synth-compare" in h for h in html)
    text = json.dumps(saved)
    assert backend.api_key not in text and TASK_APP_KEY not in text
    _outside_jupyter(lab, saved)

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
    lab.assert_clean(where="reopened")

    lab.open_notebook7("explorer.ipynb")  # the same saved outputs in Notebook 7
    explorer_cell, compare_cell = lab.cell(1), lab.cell(2)
    explorer_cell.locator(".synth-explorer").wait_for(timeout=60_000)
    compare_cell.locator(".synth-compare img").first.wait_for(timeout=60_000)
    _open_prompt_with_the_keyboard_and_the_mouse(lab, explorer_cell)
    _switch_axis(lab, compare_cell)
    lab.assert_clean(where="Notebook 7")
