"""Keys pressed with the focus in a synth-nb view, walked in real JupyterLab and Notebook 7 (headless Chromium).

Single keys stay in the view (a command-mode `b` on a wizard button must not add a cell), but Ctrl/Cmd
combinations reach the notebook: Ctrl+S saves from the wizard and from the "Cancel job" button the focus moves
to after Submit (the file on disk changes), and Escape puts the focus back on the cell.
Jobs go to an embedded local backend that replays bundled recordings (no task app, nothing trains).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from .test_wizard_journeys import open_wizard, project, tick, wizard_at

pytestmark = pytest.mark.browser

CELLS = "() => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell, .jp-Notebook .jp-Cell').length"


def _saved_after(path: Path, before: str, timeout: float = 30) -> str:
    """The file's text once it differs from ``before`` and is whole (a save is a request to the server: wait for
    it; the server writes the file in place, so a read during the save can see it half written)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = path.read_text()
        if text != before and _whole(text):
            return text
        time.sleep(0.2)
    raise AssertionError(f"{path.name} was not saved within {timeout} s")


def _whole(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def _focus_in_cell(lab: Any, index: int) -> bool:
    return bool(lab.cell(index).evaluate("cell => document.activeElement === cell"))


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_ctrl_s_saves_and_escape_returns_to_the_cell_from_the_wizard_and_its_panel(lab: Any, front_end: str) -> None:
    project(lab)
    path, wizard = open_wizard(lab, "keys.ipynb", front_end, speed=0.5)
    page = lab.page
    tick(lab, "gepa.toml")
    cells = page.evaluate(CELLS)

    # a single key on a wizard button stays in the wizard: command mode's `b` adds no cell
    wizard.locator("[data-testid=step-secrets]").focus()
    page.keyboard.press("b")
    page.keyboard.press("a")
    assert page.evaluate(CELLS) == cells
    assert page.evaluate("() => document.activeElement.dataset.testid") == "step-secrets"

    # Ctrl+S from the wizard saves the notebook: the file on disk now holds the wizard's output
    before = path.read_text()
    assert "synth-wizard" not in before and "application/vnd.jupyter.widget-view+json" not in before
    page.keyboard.press("Control+s")
    saved = _saved_after(path, before)
    assert "application/vnd.jupyter.widget-view+json" in saved
    assert page.evaluate("() => document.activeElement.dataset.testid") == "step-secrets"  # the focus stayed

    # Submit: the focus moves to the job's "Cancel job"; Ctrl+S there saves what was submitted
    wizard = wizard_at(lab, "submit")
    wizard.locator("button.synth-submit[aria-disabled=false]").click()
    [job_id] = lab.submitted_ids(1)
    page.wait_for_function("() => document.activeElement?.closest('.synth-controls') !== null", timeout=60_000)
    assert page.evaluate("() => document.activeElement.textContent") == "Cancel job"
    page.keyboard.press("b")
    assert page.evaluate(CELLS) == cells
    page.keyboard.press("Control+s")
    saved = _saved_after(path, saved)
    assert job_id in saved
    lab.screenshot(f"{front_end}-saved-from-cancel", lab.cell(1))

    # Escape leaves the row for the cell (command mode): now `b` is the notebook's again
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.activeElement?.classList.contains('jp-Cell')")
    assert _focus_in_cell(lab, 1)
    lab.screenshot(f"{front_end}-escape-to-cell", lab.cell(1))
    page.keyboard.press("b")
    page.wait_for_function(f"n => ({CELLS})() === n + 1", arg=cells)
    lab.assert_clean(where=f"keys in {front_end}")
