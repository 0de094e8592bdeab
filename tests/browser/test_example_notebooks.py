"""The example notebooks as a newcomer runs them: opened in JupyterLab, Run All, nothing started by hand.

The folder holds only the example's notebook, its configs and data (no ``.env``: the embedded backend needs
no key and serves the bundled task apps). Every cell must run without an error, the panel must end
``succeeded`` with its chart and summary on screen, and the saved notebook, reopened with no kernel, must
still show them. ``tests/notebook/test_example_notebooks.py`` checks the numbers headless.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest

pytestmark = pytest.mark.browser

EXAMPLES = Path(__file__).resolve().parents[2] / "example_notebooks"
#: each example and the title of the result it ends with: real GEPA (two runs, compared) and MIPRO searches,
#: a tiny-model SFT and an RL run (torch, on the CPU)
NOTEBOOKS = {"prompt_learning_gepa.ipynb": "Prompt-learning summary", "prompt_learning_mipro.ipynb":
             "Prompt-learning summary", "sft.ipynb": "SFT result", "rl.ipynb": "RL result"}


def _run_all(lab: Any, timeout: float) -> None:
    lab.page.evaluate("""() => {
        window.__synthAllDone = false;
        window.jupyterapp.commands.execute('notebook:run-all-cells')
            .finally(() => { window.__synthAllDone = true; });
    }""")
    lab.page.wait_for_function("() => window.__synthAllDone === true", timeout=timeout * 1000)
    lab.wait_idle(timeout)


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_an_example_runs_top_to_bottom_and_reopens_with_its_results(lab: Any, name: str) -> None:
    shutil.copytree(EXAMPLES, lab.folder, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".synth_nb", "results", "*.ipynb", "run_demo.py"))
    shutil.copy(EXAMPLES / name, lab.folder / name)
    lab.open(name)
    _run_all(lab, timeout=900)
    monitor = lab.page.locator(".synth-monitor[data-status='succeeded']").first
    monitor.wait_for(timeout=60_000)
    result = lab.page.locator(".jp-OutputArea").get_by_text(NOTEBOOKS[name]).first
    result.wait_for(timeout=60_000)
    lab.screenshot("ran")
    lab.save()

    saved = nbformat.read(lab.folder / name, as_version=4)
    code = [c for c in saved.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code), "a cell did not run"
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, [f"{o['ename']}: {o['evalue']}" for o in errors]

    lab.shutdown_kernels()
    lab.page.goto("about:blank")
    lab.open(name)
    lab.page.locator(".synth-monitor[data-status='succeeded']").first.wait_for(timeout=60_000)
    chart = lab.page.locator("img.synth-chart").first
    chart.wait_for(timeout=60_000)
    assert (chart.get_attribute("src") or "").startswith(("data:image/png;base64,", "blob:"))
    assert lab.page.locator(".jp-OutputArea").get_by_text(NOTEBOOKS[name]).first.is_visible()
    lab.screenshot("reopened")
