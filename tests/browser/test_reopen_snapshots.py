"""A notebook reopened without its kernel shows no widget error for anything that is over.

Walked in real JupyterLab and Notebook 7 (headless Chromium): an SFT job submitted with ``--yes`` ends and
its button row becomes static text at once (nothing is left to press); a GEPA job submitted from the
wizard ends with its row live (Export still writes files); then the kernel shuts down and the wizard and
that row become static snapshots too. The notebook saved after that holds no widget output, and reopened
with no kernel it shows what was submitted and the buttons' last state, with no "Error displaying widget".
Jobs go to an embedded local backend that replays bundled recordings (no task app, nothing trains).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from .test_wizard_journeys import CANARIES, project, saved_outputs, setup_cell, tick, wizard_at

pytestmark = pytest.mark.browser

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _widget_outputs(path: Any, index: int) -> int:
    return sum(WIDGET_VIEW in o.get("data", {}) for o in saved_outputs(path, index))


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_ended_jobs_and_a_stopped_kernel_leave_static_snapshots_that_reopen_cleanly(lab: Any, front_end: str) -> None:
    project(lab)
    path = lab.write_notebook("reopen.ipynb", [
        setup_cell(), "sft = %synth_train -c sft.toml --backend local --yes", "%synth_train --backend local"])
    open_notebook = lab.open if front_end == "jupyterlab" else lab.open_notebook7
    open_notebook("reopen.ipynb")
    lab.run_cell(0)

    # 1. an ended job with nothing left to press: its row is static text while the kernel still runs
    lab.run_cell(1)
    sft_id = re.search(r"submitted sft job (\S+)", lab.wait_output(1, "submitted sft job")).group(1)  # type: ignore[union-attr]
    row = lab.cell(1).locator(f".synth-controls-snapshot[data-job-id='{sft_id}']")
    row.wait_for(timeout=120_000)
    assert [line for line in row.inner_text().splitlines() if line.strip()][:2] == [f"Job {sft_id}: succeeded.", "Job finished: off"]
    assert lab.cell(1).locator(".synth-controls").count() == 0
    lab.save()
    assert _widget_outputs(path, 1) == 0

    # 2. the wizard submits a GEPA job and is replaced by what it sent; the job's row keeps Export live after the end
    lab.run_cell(2)
    tick(lab, "gepa.toml")  # two valid configs: none is ticked until one is picked
    wizard = wizard_at(lab, "submit")
    wizard.locator("button.synth-submit[aria-disabled=false]").click()
    [gepa_id] = lab.submitted_ids(2)
    cell = lab.cell(2)
    cell.locator(f".synth-monitor[data-job-id='{gepa_id}'][data-status='succeeded']").wait_for(timeout=120_000)
    cell.locator("button.synth-export:not([disabled])").wait_for(timeout=60_000)

    lab.save()
    assert _widget_outputs(path, 2) == 1  # the row; the wizard is static output already

    # 3. the kernel shuts down: the live row becomes a snapshot in place
    lab.shutdown_kernels()
    snapshot = cell.locator(".synth-wizard-snapshot")
    assert re.search(rf"Submitted 1 job to http://127\.0\.0\.1:\d+/api:\s*gepa\.toml \(prompt_learning\) → {gepa_id}",
                     snapshot.inner_text())
    cell.locator(f".synth-controls-snapshot[data-job-id='{gepa_id}']").wait_for(timeout=60_000)
    assert "Export summary: on" in cell.locator(".synth-controls-snapshot").inner_text()
    lab.save()
    assert _widget_outputs(path, 1) == _widget_outputs(path, 2) == 0
    saved = path.read_text()
    assert not any(c in saved for c in CANARIES)

    # 4. reopened with no kernel: the snapshots, no widget error anywhere
    lab.page.goto("about:blank")
    open_notebook("reopen.ipynb")
    reopened = lab.cell(2)
    reopened.locator(".synth-wizard-snapshot").wait_for(timeout=60_000)
    lab.cell(1).locator(f".synth-controls-snapshot[data-job-id='{sft_id}']").wait_for()
    shown = reopened.locator(".jp-OutputArea").inner_text()
    assert gepa_id in shown and "succeeded" in shown and "Export summary: on" in shown
    lab.screenshot(f"{front_end}-reopened", reopened)
    lab.assert_clean(where=f"reopened in {front_end}")
    assert json.loads(saved)["cells"][2]["outputs"]


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_a_cancelled_row_and_an_exported_row_become_text_once_the_focus_leaves_them(lab: Any, front_end: str) -> None:
    """Rows kept live only so the keyboard focus they hold is not dropped to the page (Cancel pressed in an SFT
    row; Export pressed in a prompt-learning row after its end) become text as soon as the focus is elsewhere,
    and the notebook saved then reopens with no widget error, the kernel still running."""
    project(lab)
    path = lab.write_notebook("rows.ipynb", [
        setup_cell(speed=1), "sft = %synth_train -c sft.toml --backend local --yes",
        "gepa = %synth_train -c gepa.toml --backend local --yes", "print('elsewhere')"])
    open_notebook = lab.open if front_end == "jupyterlab" else lab.open_notebook7
    open_notebook("rows.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    lab.run_cell(2)
    page = lab.page
    sft, gepa = lab.cell(1), lab.cell(2)

    # Cancel by keyboard in the running SFT job's row: the row keeps the focus while the job stops
    sft.locator(".synth-monitor[data-status='running']").wait_for(timeout=60_000)
    sft_id = str(sft.locator(".synth-monitor").get_attribute("data-job-id"))
    sft.locator("button.synth-cancel").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement.classList.contains('synth-keep-running')")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    sft.locator(".synth-monitor[data-status='cancelled']").wait_for(timeout=90_000)
    page.wait_for_function("() => document.activeElement.classList.contains('synth-toggle')")
    assert sft.locator(".synth-controls").count() == 1  # still live: it holds the focus

    # Export by keyboard in the GEPA row once its job has ended: the focus stays on Export
    gepa.locator(".synth-monitor[data-status='succeeded']").wait_for(timeout=120_000)
    gepa_id = str(gepa.locator(".synth-monitor").get_attribute("data-job-id"))
    export = gepa.locator("button.synth-export:not([disabled])")
    export.wait_for(timeout=60_000)
    export.focus()
    # the SFT row lost the focus to Export: it is text now
    said = sft.locator(f".synth-controls-snapshot[data-job-id='{sft_id}']")
    said.wait_for(timeout=60_000)
    assert said.inner_text().startswith(f"Job {sft_id}: cancelled.")
    assert sft.locator(".synth-controls").count() == 0
    page.keyboard.press("Enter")
    lab.wait_output(2, f"Wrote summary.md and summary_curve.png to results/{gepa_id}/", 60)
    assert page.evaluate("() => document.activeElement.classList.contains('synth-export')")
    assert gepa.locator(".synth-controls").count() == 1

    # the focus goes to another cell: the exported row is text too, with what the export said
    lab.cell(3).click()
    row = gepa.locator(f".synth-controls-snapshot[data-job-id='{gepa_id}']")
    row.wait_for(timeout=60_000)
    assert f"Last message: Wrote summary.md and summary_curve.png to results/{gepa_id}/" in row.inner_text()
    lab.screenshot(f"{front_end}-rows-as-text", row)
    lab.save()
    assert _widget_outputs(path, 1) == _widget_outputs(path, 2) == 0

    # reopened without its kernel: the text, no widget error
    lab.shutdown_kernels()
    page.goto("about:blank")
    open_notebook("rows.ipynb")
    lab.cell(2).locator(f".synth-controls-snapshot[data-job-id='{gepa_id}']").wait_for(timeout=60_000)
    lab.cell(1).locator(f".synth-controls-snapshot[data-job-id='{sft_id}']").wait_for()
    lab.assert_clean(where=f"reopened in {front_end}")
