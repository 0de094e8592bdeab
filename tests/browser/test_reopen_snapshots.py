"""A notebook reopened without its kernel shows no widget error for anything that is over.

Walked in real JupyterLab and Notebook 7 (headless Chromium): an SFT job submitted with ``--yes`` ends and
its button row becomes static text at once (nothing is left to press); a GEPA job submitted from the
wizard ends, its result files are written and linked, and its row becomes text too; then the kernel shuts
down and a wizard that never submitted becomes a static snapshot. The notebook saved after that holds no
widget output, and reopened with no kernel it shows what was submitted, where the files went and the
buttons' last state, with no "Error displaying widget".
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


def cancel_by_keyboard(page: Any, cell: Any) -> None:
    """Cancel the running job of ``cell`` from its row, by keyboard: the row keeps the focus while it stops."""
    cell.locator("button.synth-cancel").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement.classList.contains('synth-keep-running')")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    cell.locator(".synth-monitor[data-status='cancelled']").wait_for(timeout=90_000)


def _widget_outputs(path: Any, index: int) -> int:
    return sum(WIDGET_VIEW in o.get("data", {}) for o in saved_outputs(path, index))


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_ended_jobs_and_a_stopped_kernel_leave_static_snapshots_that_reopen_cleanly(lab: Any, front_end: str) -> None:
    project(lab)
    path = lab.write_notebook("reopen.ipynb", [
        setup_cell(), "sft = %synth_train -c sft.toml --backend local --yes", "%synth_train --backend local",
        "%synth_train --backend local"])
    open_notebook = lab.open if front_end == "jupyterlab" else lab.open_notebook7
    open_notebook("reopen.ipynb")
    lab.run_cell(0)

    # 1. an ended job with nothing left to press: its row is static text while the kernel still runs
    lab.run_cell(1)
    sft_id = re.search(r"submitted sft job (\S+)", lab.wait_output(1, "submitted sft job")).group(1)  # type: ignore[union-attr]
    row = lab.cell(1).locator(f".synth-controls-snapshot[data-job-id='{sft_id}']")
    row.wait_for(timeout=120_000)
    # one line: the status and why it stopped (never "Job finished: off", which read as "it did not finish")
    said = [line for line in row.inner_text().splitlines() if line.strip()]
    assert re.fullmatch(rf"Job {sft_id} succeeded: it ran all its planned training steps \(max_steps: (\d+) of \1 "
                        r"steps\)\. Wrote the job's bundle to \S+/", said[0]) and len(said) == 1, said
    status = lab.cell(1).locator(f".synth-monitor[data-job-id='{sft_id}']")
    assert "succeeded: it ran all its planned training steps" in status.locator(".synth-note").inner_text()
    assert status.locator("table.synth-ending th", has_text="estimate").count() == 1  # each figure beside it
    assert lab.cell(1).locator(".synth-controls").count() == 0
    lab.save()
    assert _widget_outputs(path, 1) == 0

    # 2. the wizard submits a GEPA job and is replaced by what it sent; at the end the job's files are written
    # and linked, and its row becomes text: nothing in it is left to press
    lab.run_cell(2)
    tick(lab, "gepa.toml")  # two valid configs: none is ticked until one is picked
    wizard = wizard_at(lab, "submit")
    wizard.locator("button.synth-submit[aria-disabled=false]").click()
    [gepa_id] = lab.submitted_ids(2)
    cell = lab.cell(2)
    cell.locator(f".synth-monitor[data-job-id='{gepa_id}'][data-status='succeeded']").wait_for(timeout=120_000)
    # the focus the wizard held went to the job's row: the row stays live until the focus leaves it
    lab.page.wait_for_function("() => document.activeElement?.closest('.synth-controls') !== null")
    assert cell.locator(".synth-controls").count() == 1
    lab.cell(0).click()
    gepa_row = cell.locator(f".synth-controls-snapshot[data-job-id='{gepa_id}']")
    gepa_row.wait_for(timeout=60_000)
    written = re.search(rf"Job {gepa_id} succeeded: .+\. Wrote summary\.md and summary_curve\.png to (\S*{gepa_id})/",
                        gepa_row.inner_text())
    assert written, gepa_row.inner_text()
    assert (lab.folder / written.group(1) / "summary.md").is_file()
    cell.get_by_role("link", name="summary.md").wait_for()
    assert cell.locator(".synth-controls").count() == 0
    snapshot = cell.locator(".synth-wizard-snapshot")
    assert re.search(rf"Submitted 1 job to http://127\.0\.0\.1:\d+/api:\s*gepa\.toml \(prompt_learning\) → {gepa_id}",
                     snapshot.inner_text())
    lab.save()
    assert _widget_outputs(path, 2) == 0

    # 3. a wizard is open, nothing submitted from it, when the kernel shuts down: it becomes a snapshot in place
    lab.run_cell(3)
    lab.cell(3).locator(".synth-wizard").wait_for(timeout=60_000)
    lab.save()
    assert _widget_outputs(path, 3) == 1
    lab.shutdown_kernels()
    lab.cell(3).locator(".synth-wizard-snapshot", has_text="nothing was submitted from it").wait_for(timeout=60_000)
    lab.save()
    assert _widget_outputs(path, 1) == _widget_outputs(path, 2) == _widget_outputs(path, 3) == 0
    saved = path.read_text()
    assert not any(c in saved for c in CANARIES)

    # 4. reopened with no kernel: the snapshots, no widget error anywhere
    lab.page.goto("about:blank")
    open_notebook("reopen.ipynb")
    reopened = lab.cell(2)
    reopened.locator(".synth-wizard-snapshot").wait_for(timeout=60_000)
    lab.cell(1).locator(f".synth-controls-snapshot[data-job-id='{sft_id}']").wait_for()
    shown = reopened.locator(".jp-OutputArea").inner_text()
    assert f"Job {gepa_id} succeeded: " in shown and ". Wrote summary.md" in shown
    lab.screenshot(f"{front_end}-reopened", reopened)
    lab.assert_clean(where=f"reopened in {front_end}")
    assert json.loads(saved)["cells"][2]["outputs"]


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_a_cancelled_row_becomes_text_once_the_focus_leaves_it_and_an_ended_row_at_once(lab: Any, front_end: str) -> None:
    """A row kept live only so the keyboard focus it holds is not dropped to the page (Cancel pressed in an SFT
    row) becomes text as soon as the focus is elsewhere; a prompt-learning row that ends meanwhile becomes
    text at once, saying where its files went, without taking the focus. The notebook saved then reopens
    with no widget error, the kernel still running."""
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
    cancel_by_keyboard(page, sft)
    page.wait_for_function("() => document.activeElement.classList.contains('synth-toggle')")

    # the GEPA job ends meanwhile: its row is text at once, its files written and linked; the focus stays put
    gepa.locator(".synth-monitor[data-status='succeeded']").wait_for(timeout=120_000)
    gepa_id = str(gepa.locator(".synth-monitor").get_attribute("data-job-id"))
    row = gepa.locator(f".synth-controls-snapshot[data-job-id='{gepa_id}']")
    row.wait_for(state="attached", timeout=60_000)  # a windowed notebook may not draw a cell scrolled away
    assert re.search(rf"Job {gepa_id} succeeded: .+\. Wrote summary\.md and summary_curve\.png to \S*{gepa_id}/",
                     row.text_content() or "")
    gepa.get_by_role("link", name="summary.md").wait_for()
    assert page.evaluate("() => document.activeElement.classList.contains('synth-toggle')")
    assert sft.locator(".synth-controls").count() == 1  # still live: it holds the focus

    # the focus goes to another cell: the cancelled row is text too
    lab.cell(3).click()
    said = sft.locator(f".synth-controls-snapshot[data-job-id='{sft_id}']")
    said.wait_for(state="attached", timeout=60_000)  # a windowed notebook may not draw the cell scrolled away
    assert (said.text_content() or "").startswith(f"Job {sft_id} cancelled by the panel's Cancel button.")
    assert sft.locator(".synth-controls").count() == 0
    lab.screenshot(f"{front_end}-rows-as-text", lab.page.locator(".jp-Notebook"))
    lab.save()
    assert _widget_outputs(path, 1) == _widget_outputs(path, 2) == 0

    # reopened without its kernel: the text, no widget error
    lab.shutdown_kernels()
    page.goto("about:blank")
    open_notebook("rows.ipynb")
    lab.cell(2).locator(f".synth-controls-snapshot[data-job-id='{gepa_id}']").wait_for(timeout=60_000)
    lab.cell(1).locator(f".synth-controls-snapshot[data-job-id='{sft_id}']").wait_for()
    lab.assert_clean(where=f"reopened in {front_end}")
