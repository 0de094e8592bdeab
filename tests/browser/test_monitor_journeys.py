"""What a newcomer reads in the monitor panel, in real JupyterLab, through save → close → reopen.

A real MIPRO job (the bundled banking task app scored by the deterministic keyword policy) runs on an
embedded local backend from ``%synth_train --config … --yes``; RL, a failing SFT job and a slow SFT job
replay recordings beside it, each in a panel shown with ``show_job``. The journeys: the prompt-learning
chart ends with the search baseline and the held-out scores both labelled; progress ends full and green
on success, red where a failed or cancelled job stopped; the end writes ``results/<job id>/`` and links
it; the RL result opens with a headline; Cancel asks first; the dark theme shows no white chart block;
and the saved notebook, reopened and converted with ``nbconvert``, keeps status, chart and summary as
plain outputs.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .a11y_support import set_theme

pytestmark = pytest.mark.browser

TASK_APP_KEY = "sk_env_journey_" + "j" * 20
MIPRO = """\
[prompt_learning]
algorithm = "mipro"
task_app_url = "http://127.0.0.1:8102"
task_app_id = "banking"
results_folder = "results"

[prompt_learning.initial_prompt]
id = "banking_intents"
name = "Banking intent classification"

[[prompt_learning.initial_prompt.messages]]
role = "system"
pattern = "Classify the customer query into one banking intent using the `banking_classify` tool."
order = 0

[[prompt_learning.initial_prompt.messages]]
role = "user"
pattern = "Customer Query: {query}\\n\\nAvailable Intents:\\n{available_intents}"
order = 1

[prompt_learning.initial_prompt.wildcards]
query = "REQUIRED"
available_intents = "REQUIRED"

[prompt_learning.policy]
inference_mode = "synth_hosted"
provider = "openai"
model = "gpt-4.1-mini"
temperature = 0.0
local_policy = "keyword"

[prompt_learning.mipro]
env_name = "banking"
num_iterations = 2
num_evaluations_per_iteration = 4
batch_size = 8
max_concurrent = 8
few_shot_score_threshold = 0.8
full_eval_every_k = 2
bootstrap_train_seeds = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
online_pool = [80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103]
test_pool = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]

[prompt_learning.termination_config]
max_rollouts = 1000
"""

SETUP = """\
%load_ext synth_nb
from pathlib import Path
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job
from synth_nb.local import start_backend
from synth_nb.notebook.show import show_job
from synth_nb.pipeline import use_local_backend

backend = start_backend(recordings_dir=Path('.').resolve())
use_local_backend(backend)
client = AsyncSynthClient(backend.url + '/api', backend.api_key)

async def replay(recording, flow, speed=1.0):
    endpoints = get_flow(flow).endpoints
    doc = await client.create_job(endpoints, {'metadata': {'local_executor': 'replay', 'recording': recording,
                                                           'replay_speed': speed}})
    await client.start(endpoints, doc['id'])
    return Job(doc['id'], flow, client, endpoints=endpoints, poll_interval=0.5)

print('setup ok')
"""


def _write(path: Path, lines: list[tuple[float, str, dict[str, Any]]]) -> str:
    path.write_text("".join(json.dumps({"t": t, "kind": k, "payload": p}) + "\n" for t, k, p in lines))
    return path.name


def sft_recording(path: Path, *, steps: int, seconds: float, end: str) -> str:
    lines: list[tuple[float, str, dict[str, Any]]] = [(0, "meta", {"flow": "sft"}), (0, "status", {"status": "running"})]
    for s in range(1, steps + 1):
        t = seconds * s / steps
        lines.append((t, "metric", {"name": "train.loss", "step": s, "value": 2.0 / (1 + s / 10)}))
        lines.append((t, "event", {"type": "sft.training.step", "message": f"step {s}",
                                   "data": {"step": s, "total_steps": 2 * steps if end == "failed" else steps}}))
    final = {"status": end}
    if end == "failed":
        final["error"] = "the training worker ran out of memory"
    lines.append((seconds, "status", final))
    return _write(path, lines)


def cells(folder: Path, task_url: str) -> list[str]:
    failing = sft_recording(folder / "failing.jsonl", steps=20, seconds=2, end="failed")
    slow = sft_recording(folder / "slow.jsonl", steps=200, seconds=400, end="succeeded")
    return [
        SETUP,
        f"job = %synth_train --config mipro.toml --backend local --task-url {task_url} --yes",
        "rl = await replay('rl', 'rl', speed=20)\nrl_panel = show_job(rl)",
        f"failing = await replay({failing!r}, 'sft')\nfailing_panel = show_job(failing)",
        f"slow = await replay({slow!r}, 'sft')\nslow_panel = show_job(slow)",
    ]


def _status(lab: Any, index: int, status: str, timeout: float = 120.0) -> Any:
    lab.cell(index).scroll_into_view_if_needed()  # JupyterLab does not lay out cells far off screen
    monitor = lab.cell(index).locator(f".synth-monitor[data-status='{status}']")
    monitor.wait_for(timeout=timeout * 1000)
    return monitor


def _final(lab: Any, index: int, status: str) -> None:
    """The panel has drawn its last frame (the note is set by the final render: why the job stopped)."""
    _status(lab, index, status)
    note = "cancelled by the panel's Cancel button" if status == "cancelled" else f"{status}: "
    lab.cell(index).locator(".synth-note", has_text=note).wait_for(timeout=120_000)


def _rgb(css: str) -> tuple[float, float, float]:
    numbers = [float(v) for v in re.findall(r"[\d.]+", css)[:3]]
    if "color(srgb" in css:
        return numbers[0] * 255, numbers[1] * 255, numbers[2] * 255
    return numbers[0], numbers[1], numbers[2]


def _bar_colour(lab: Any, index: int) -> tuple[float, float, float]:
    return _rgb(lab.cell(index).locator("progress.synth-progress").evaluate("el => getComputedStyle(el).accentColor"))


def _pixels(png: bytes) -> Any:
    from matplotlib.image import imread

    return imread(io.BytesIO(png), format="png")


def _luminance(rgb: Any) -> float:
    return float(0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2])


def _chart_background(lab: Any, index: int, label: str) -> tuple[float, float]:
    """(luminance of the chart image's corner, share of near-white pixels) on screen."""
    img = lab.cell(index).locator("img.synth-chart")
    img.scroll_into_view_if_needed()
    pixels = _pixels(img.screenshot())
    lab.screenshot(label, lab.cell(index))
    corner = pixels[2, 2, :3]
    white = (pixels[:, :, :3].min(axis=2) > 0.93).mean()
    return _luminance(corner), float(white)


def test_monitor_journeys_survive_save_close_and_reopen(lab) -> None:  # type: ignore[no-untyped-def]
    from synth_nb.local.examples import start_task_app

    task_app = start_task_app("banking", api_key=TASK_APP_KEY)
    try:
        (lab.folder / "mipro.toml").write_text(MIPRO)
        (lab.folder / ".env").write_text(f"ENVIRONMENT_API_KEY={TASK_APP_KEY}\n")
        lab.write_notebook("journeys.ipynb", cells(lab.folder, task_app.url))
        lab.open("journeys.ipynb")
        lab.run_cell(0)
        lab.wait_output(0, "setup ok", 90)
        for index in range(1, 5):
            lab.run_cell(index, timeout=180)
        _walk(lab)
    finally:
        task_app.stop()


def _walk(lab: Any) -> None:
    page = lab.page
    # Cancel asks first: "Keep running" leaves the job alone, "Yes, cancel the job" stops it
    _status(lab, 4, "running")
    slow = lab.cell(4)
    slow.locator("button.synth-cancel").click()
    slow.locator("button.synth-keep-running").wait_for()
    page.wait_for_function("() => document.activeElement.classList.contains('synth-keep-running')")
    lab.screenshot("cancel-asks", slow)
    slow.locator("button.synth-keep-running").click()
    time.sleep(1.5)
    assert slow.locator(".synth-monitor").get_attribute("data-status") == "running"
    assert slow.locator("button.synth-confirm-cancel").is_hidden()
    slow.locator("button.synth-cancel").click()
    slow.locator("button.synth-confirm-cancel").click()
    _final(lab, 4, "cancelled")

    # the prompt-learning chart at the end: search baseline and held-out scores, both labelled
    _final(lab, 1, "succeeded")
    mipro = lab.cell(1)
    mipro.get_by_text("Prompt-learning summary").first.wait_for(timeout=60_000)
    alt = mipro.locator("img.synth-chart").get_attribute("alt") or ""
    found = re.search(r"best so far ([\d.]+) at rollouts used \d+.*; baseline \(search\) ([\d.]+); "
                      r"baseline \(held-out\) [\d.]+; best prompt \(held-out\) [\d.]+\.$", alt)
    assert found, alt
    assert float(found.group(1)) >= float(found.group(2)), "best so far reads as a regression below the baseline"
    # progress of a MIPRO job that used a fifth of its budget ends full and green, not at 22%
    assert mipro.locator("progress.synth-progress").get_attribute("value") == "1.0000"
    label = mipro.locator(".synth-progress-label").text_content() or ""
    assert label.endswith("rollouts · finished") and "%" not in label, label
    red, green, blue = _bar_colour(lab, 1)
    assert green > red + 40 and green > blue + 20, (red, green, blue)

    # the result files: results/<job id>/ beside the config, written at the end, said in the row, linked in the cell
    job_id = mipro.locator(".synth-monitor").get_attribute("data-job-id")
    lab.wait_output(1, f"Wrote summary.md and summary_curve.png to results/{job_id}/", 60)
    assert (lab.folder / "results" / str(job_id) / "summary.md").is_file()
    link = mipro.get_by_role("link", name="summary.md")
    link.wait_for(timeout=30_000)
    lab.screenshot("pl-finished-light", mipro)
    _opens(lab, link, f"results/{job_id}/summary.md")

    # failed and cancelled jobs: the bar stays where they stopped, in red
    _final(lab, 3, "failed")
    for index in (3, 4):
        red, green, blue = _bar_colour(lab, index)
        assert red > green + 60 and red > blue + 60, (index, red, green, blue)
    assert lab.cell(3).locator("progress.synth-progress").get_attribute("value") == "0.5000"
    lab.screenshot("failed-red", lab.cell(3))

    # the RL result opens with a headline; its long status JSON is folded below
    _final(lab, 2, "succeeded")
    rl = lab.cell(2)
    headline = rl.locator(".synth-artifacts li").first
    headline.wait_for(timeout=60_000)
    text = headline.text_content() or ""
    assert re.fullmatch(r"reward -?\d\.\d\d → -?\d\.\d\d over \d+ steps", text), text
    assert rl.locator(".synth-artifacts details").get_attribute("open") is None
    assert not rl.locator(".synth-artifacts pre").is_visible()
    lab.screenshot("rl-headline", rl)

    # themes: the chart's background is the page's own in light and in dark, never a white block
    light_corner, _ = _chart_background(lab, 1, "chart-light")
    assert light_corner > 0.85, light_corner
    set_theme(page, "dark")
    dark_corner, white = _chart_background(lab, 1, "chart-dark")
    assert dark_corner < 0.3 and white < 0.02, (dark_corner, white)
    lab.screenshot("rl-dark", rl)
    set_theme(page, "light")
    lab.assert_clean(where="four panels, live")

    _save_close_reopen(lab, str(job_id))


def _opens(lab: Any, link: Any, path: str) -> None:
    """Clicking the link opens the file in a JupyterLab tab; the tab is closed again afterwards."""
    link.click()
    lab.page.wait_for_function("""(p) => {
        const w = window.jupyterapp.shell.currentWidget;
        return !!(w && w.context && w.context.path.endsWith(p) && w.context.isReady);
    }""", arg=path, timeout=30_000)
    text = lab.page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.toString()")
    assert text.startswith("# Prompt-learning summary"), text[:200]
    lab.screenshot("export-opened")
    lab.page.evaluate("() => window.jupyterapp.shell.currentWidget.close()")
    lab.page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell")


def _save_close_reopen(lab: Any, job_id: str) -> None:
    lab.save()
    lab.shutdown_kernels()
    lab.page.goto("about:blank")
    saved = json.loads((lab.folder / "journeys.ipynb").read_text())
    outputs = [out for cell in saved["cells"] for out in cell.get("outputs", [])]
    plain = [out for out in outputs if "data" in out and "application/vnd.jupyter.widget-view+json" not in out["data"]]
    html = ["".join(out["data"].get("text/html", "")) for out in plain]  # nbformat may split text in lines
    assert sum("<img class='synth-chart'" in text for text in html) == 4  # every job's chart, as plain HTML
    assert sum("<div class='synth-monitor'" in text for text in html) == 4

    lab.open("journeys.ipynb")  # a fresh kernel: nothing is re-run, the outputs come from the file
    mipro = lab.cell(1)
    mipro.locator(".synth-monitor[data-status='succeeded']").wait_for()
    assert mipro.locator("img.synth-chart").count() == 1
    assert "baseline (held-out)" in (mipro.locator("img.synth-chart").get_attribute("alt") or "")
    mipro.get_by_role("link", name="summary.md").wait_for()
    mipro.get_by_text("Prompt-learning summary").first.wait_for()
    lab.cell(2).locator(".synth-artifacts li", has_text="reward ").first.wait_for()
    lab.cell(3).locator("progress.synth-progress-failed").wait_for()
    lab.screenshot("reopened", mipro)

    html = _nbconvert(lab.folder / "journeys.ipynb")
    assert len(re.findall(r"<img [^>]*class=.synth-chart.", html)) == 4  # one chart per job
    for status in ("succeeded", "failed", "cancelled"):
        assert re.search(rf"data-status=.{status}.", html), status
    assert re.search(rf"<a href=.results/{job_id}/summary.md.>summary.md</a>", html)
    assert "Prompt-learning summary" in html and "HBox(" not in html  # no widget repr in place of buttons
    assert re.search(r"<li>reward -?\d\.\d\d → -?\d\.\d\d over \d+ steps</li>", html)


def _nbconvert(notebook: Path) -> str:
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(notebook), "--output",
                    "journeys-export.html"], check=True, capture_output=True, timeout=180)
    return (notebook.parent / "journeys-export.html").read_text(encoding="utf-8")
