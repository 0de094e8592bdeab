"""``fk = %synth_train --fork ID`` and ``w = %synth_train`` (an assignment, which IPython shows nothing of) open
the wizard as the unassigned forms do, each exactly once. Walked in real JupyterLab and Notebook 7.

The parent job runs on an embedded backend that replays bundled recordings (no task app, nothing trains).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from .test_wizard_journeys import project, setup_cell

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_assigned_fork_and_wizard_cells_open_the_wizard_once(lab: Any, front_end: str) -> None:
    project(lab)
    lab.write_notebook("assigned.ipynb", [
        setup_cell(),
        "parent = %synth_train -c gepa.toml --backend local --yes --wait\nprint('PARENT', parent.id)",
        "fk = %synth_train --fork {parent.id}",
        "%synth_train --fork {parent.id}",
        "w = %synth_train --backend local",
        "print('SAME', fk is not w and type(fk).__name__, type(w).__name__)",
    ])
    open_notebook = lab.open if front_end == "jupyterlab" else lab.open_notebook7
    open_notebook("assigned.ipynb")
    lab.run_cell(0)
    lab.run_cell(1, timeout=180)
    parent = re.search(r"PARENT (\S+)", lab.wait_output(1, "PARENT")).group(1)  # type: ignore[union-attr]
    for index in (2, 3, 4):
        lab.run_cell(index)
        lab.cell(index).locator(".synth-wizard").wait_for(timeout=60_000)
    for index in (2, 3):
        wizard = lab.cell(index).locator(".synth-wizard")
        assert wizard.count() == 1, f"cell {index} shows {wizard.count()} wizards"
        assert wizard.locator(".synth-title").inner_text() == f"Fork job {parent}"
    assert lab.cell(4).locator(".synth-wizard").count() == 1
    assert lab.cell(4).locator(".synth-title").inner_text() == "Launch a Synth training job"
    for index in (2, 3, 4):  # no text value under the widget (Out[N]: Wizard(...))
        assert "Wizard(" not in lab.output_text(index) and "synth-nb wizard (" not in lab.output_text(index)
    lab.screenshot(f"{front_end}-assigned-fork", lab.cell(2))
    lab.run_cell(5)
    assert "SAME Wizard Wizard" in lab.wait_output(5, "SAME")
    lab.assert_clean(where=f"assigned wizards in {front_end}")
