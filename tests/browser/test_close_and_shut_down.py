"""Save, then File → Close and Shut Down Notebook, then reopen: no widget error, in JupyterLab and Notebook 7.

The most ordinary way to end a session. The notebook is saved while synth-nb's widgets are live (a wizard that
sent nothing, the button row of a running job, the row of a cancelled job that still holds the keyboard focus)
next to a finished job whose row is text already; the close shuts the kernel down and disposes of the notebook
without saving it again. The file on disk must then hold no widget output of ours, and reopened without a kernel
it shows each of them as static text, with no "Error displaying widget: model not found".
Jobs go to an embedded local backend that replays bundled recordings (no task app, nothing trains).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .test_reopen_snapshots import cancel_by_keyboard
from .test_wizard_journeys import CANARIES, project, setup_cell

pytestmark = pytest.mark.browser

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _widget_outputs(path: Path) -> set[int] | None:
    """The cells whose saved outputs still show a widget; None while a save is writing the file (the server
    writes it in place, so it can be read half written)."""
    try:
        cells = json.loads(path.read_text())["cells"]
    except json.JSONDecodeError:
        return None
    return {i for i, cell in enumerate(cells) for o in cell.get("outputs", []) if WIDGET_VIEW in o.get("data", {})}


def _wait_saved_widgets(path: Path, cells: set[int], why: str) -> None:
    """Wait until the file on disk shows widgets in exactly ``cells`` (a save may still be on its way)."""
    deadline = time.monotonic() + 60
    while _widget_outputs(path) != cells and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _widget_outputs(path) == cells, why


def _close_and_shut_down(lab: Any, once_asked: Callable[[], None]) -> None:
    """File → Close and Shut Down Notebook…, confirmed, as a user does it; ``once_asked`` runs while the dialog
    asks (the focus has left the notebook by then)."""
    page = lab.page
    page.locator(".lm-MenuBar-itemLabel", has_text="File").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Close and Shut Down Notebook").first.click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    once_asked()
    dialog.locator("button.jp-mod-accept").click()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the kernel is gone once the server lists no session for the notebook
        if not [s for s in lab.server.api("GET", "/api/sessions") or [] if s["path"].startswith(lab.rel + "/")]:
            return
        time.sleep(0.2)
    raise AssertionError("the notebook's kernel is still running after Close and Shut Down")


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_save_then_close_and_shut_down_reopens_without_widget_errors(lab: Any, front_end: str) -> None:
    project(lab)
    path = lab.write_notebook("closing.ipynb", [
        setup_cell(speed=1),
        "done = %synth_train -c sft.toml --backend local --yes",
        "stopped = %synth_train -c sft.toml --backend local --yes",
        "running = %synth_train -c gepa.toml --backend local --yes",
        "%synth_train --backend local",
    ])
    open_notebook = lab.open if front_end == "jupyterlab" else lab.open_notebook7
    open_notebook("closing.ipynb")
    page = lab.page
    lab.run_cell(0)

    # a finished job: its row is text already
    lab.run_cell(1)
    done = lab.cell(1)
    done.locator(".synth-controls-snapshot").wait_for(timeout=180_000)
    done_id = str(done.locator(".synth-monitor").get_attribute("data-job-id"))

    # a job cancelled from its row with the keyboard: the row keeps the focus, so it stays a widget
    lab.run_cell(2)
    stopped = lab.cell(2)
    stopped.locator(".synth-monitor[data-status='running']").wait_for(timeout=60_000)
    stopped_id = str(stopped.locator(".synth-monitor").get_attribute("data-job-id"))

    # a wizard that sent nothing, and a job still running when the notebook closes
    lab.run_cell(4)
    lab.cell(4).locator(".synth-wizard").wait_for(timeout=60_000)
    lab.run_cell(3)
    running = lab.cell(3)
    running.locator(".synth-monitor[data-status='running']").wait_for(timeout=60_000)
    running_id = str(running.locator(".synth-monitor").get_attribute("data-job-id"))

    cancel_by_keyboard(page, stopped)
    assert stopped.locator(".synth-controls").count() == 1  # it holds the focus

    page.keyboard.press("Control+s")  # saved from the row that holds the focus
    _wait_saved_widgets(path, {2, 3, 4}, "saved with the wizard, the running row and the cancelled row live")
    lab.screenshot(f"{front_end}-saved", page.locator(".jp-Notebook"))

    # the menu and its dialog take the focus from the cancelled row: the kernel then replaces that row by its
    # text (a kernel that has not done so when the shutdown comes leaves the front end's static copy instead)
    _close_and_shut_down(lab, once_asked=lambda: stopped.locator(".synth-controls-snapshot").wait_for(timeout=60_000))
    _wait_saved_widgets(path, set(), "the notebook on disk still shows widgets that need the closed kernel")
    saved = path.read_text()
    assert not any(c in saved for c in CANARIES)

    page.goto("about:blank")
    open_notebook("closing.ipynb")
    # rows that were over before the close are the kernel's text; the others the copies made as the kernel went
    for index in (1, 2):
        lab.cell(index).locator(".synth-controls-snapshot").wait_for(timeout=60_000)
    lab.cell(3).locator(".synth-frozen .synth-cancel[disabled]").wait_for(timeout=60_000)
    assert "The kernel that followed job" in (lab.cell(3).locator(".synth-frozen").text_content() or "")
    wizard = lab.cell(4).locator(".synth-frozen .synth-wizard")
    wizard.wait_for(timeout=60_000)
    wizard.scroll_into_view_if_needed()
    assert "The kernel that ran this wizard is gone" in (wizard.text_content() or "")
    assert wizard.locator("button:not([disabled])").count() == 0
    shown = page.locator(".jp-Notebook").text_content() or ""
    for job_id in (done_id, stopped_id, running_id):
        assert job_id in shown
    assert f"Job {stopped_id} cancelled by the panel's Cancel button." in lab.cell(2).locator(".synth-controls-snapshot").inner_text()
    lab.screenshot(f"{front_end}-reopened", page.locator(".jp-Notebook"))
    lab.assert_clean(where=f"reopened in {front_end}")
    assert "model not found" not in shown
