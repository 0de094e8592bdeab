"""The wizard, the explorer and a comparison at 640 px (a 1280 px screen at 200% zoom), in real JupyterLab and
Notebook 7: nothing of ours scrolls sideways (a data table may, inside its own box, as WCAG 1.4.10 allows), the
wizard's live region speaks without leaving a stray grey line under Back/Next, and the explorer's axes have
round ticks. Jobs go to an embedded local backend that replays bundled recordings.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from .test_magic_and_narrow_panel import _OVERFLOWING
from .test_wizard_journeys import project, setup_cell, tick, wizard_at

pytestmark = pytest.mark.browser

#: the visually hidden parts of a view (skip links, the wizard's live region) and SVG text are no overflow
_SHOWN_OVERFLOW = f"(root) => ({_OVERFLOWING})(root).filter((line) => !/^(a\\.skip|div\\.synth-live|text):/.test(line))"


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_the_wizard_explorer_and_comparison_fit_640_px(lab: Any, front_end: str) -> None:
    project(lab)
    lab.write_notebook("narrow.ipynb", [
        setup_cell(), "%synth_train --backend local",
        "g = %synth_train -c gepa.toml --backend local --yes --wait", "g.explorer()", "%synth_train --compare"])
    lab.page.set_viewport_size({"width": 640, "height": 900})
    (lab.open if front_end == "jupyterlab" else lab.open_notebook7)("narrow.ipynb")
    for index in range(5):
        lab.run_cell(index, timeout=300)
    page = lab.page
    wizard = page.locator(".synth-wizard")
    tick(lab, "gepa.toml")
    for step in ("configs", "secrets", "overrides", "preview", "submit"):
        wizard_at(lab, step)
        assert lab.cell(1).locator(".jp-OutputArea").evaluate(_SHOWN_OVERFLOW) == [], step
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"), step
    # the live region says each step to a screen reader and takes no room on screen
    live = wizard.locator("[data-testid=wizard-live]")
    assert live.inner_text().startswith("Step 5 of 5: Submit.")
    box = live.bounding_box()
    assert box is not None and box["width"] <= 1 and box["height"] <= 1
    footer = wizard.locator(".synth-footer").bounding_box()
    content = wizard.locator(".synth-content").bounding_box()
    assert footer is not None and content is not None
    assert abs((footer["y"] + footer["height"]) - (content["y"] + content["height"])) < 2  # nothing under Back/Next
    lab.screenshot(f"{front_end}-640px-wizard", wizard)

    for index, what in ((3, "explorer"), (4, "comparison")):
        outputs = lab.cell(index).locator(".jp-OutputArea")
        assert outputs.evaluate(_SHOWN_OVERFLOW) == [], what
        outputs.scroll_into_view_if_needed()
        lab.screenshot(f"{front_end}-640px-{what}", outputs)
    for plot in lab.cell(3).locator("svg.synth-pareto").all():  # round ticks on both axes, evenly spaced
        for anchor in ("middle", "end"):
            values = [float(t) for t in plot.locator(f"text.tick[text-anchor={anchor}]").all_text_contents()]
            steps = {round(b - a, 9) for a, b in zip(values, values[1:], strict=False)}
            assert len(steps) == 1, values
            step = steps.pop()
            assert re.fullmatch(r"(1|2|2\.5|5)(0*|e[-+]?\d+)", f"{step / 10 ** math.floor(math.log10(step)):g}"), values
    lab.assert_clean(where=f"narrow views in {front_end}")
