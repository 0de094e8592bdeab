"""The magic's errors and the monitor panel in a narrow window, in real JupyterLab and Notebook 7.

* An invalid config's error is shown once (the UsageError), naming file, ``table.key`` and line.
* At 640 px (a 1280 px screen at 200% zoom) no part of a monitor panel is wider than its box: nothing
  but a data table scrolls sideways, running or ended (a GEPA job, and an SFT job whose bundle's folder is
  named in a code span).
"""

from __future__ import annotations

from typing import Any

import pytest

from .test_wizard_journeys import project, setup_cell

pytestmark = pytest.mark.browser

#: elements of the cell's outputs (a panel's status, chart, controls, summary) wider than their own box; a
#: data table (the summary's candidates) may scroll inside its output, as WCAG 1.4.10 allows, wherever it
#: sits in the output (the escaped Markdown is wrapped in a div of its own): an element is left out only
#: when, its tables hidden for a moment, it fits its box (nothing else, a code span or a line, sticks out)
_OVERFLOWING = r"""
(root) => {
  const out = [];
  const name = (el) => el.tagName.toLowerCase() + (el.className && typeof el.className === "string"
    ? "." + el.className.trim().split(/\s+/).join(".") : "");
  const onlyTables = (el) => {
    const tables = [...el.querySelectorAll("table")];
    if (tables.length === 0) return false;
    const display = tables.map((table) => table.style.display);
    tables.forEach((table) => { table.style.display = "none"; });
    const fits = el.scrollWidth <= el.clientWidth;
    tables.forEach((table, i) => { table.style.display = display[i]; });
    return fits;
  };
  for (const el of [root, ...root.querySelectorAll("*")]) {
    if (!el.clientWidth || el.scrollWidth <= el.clientWidth) continue;  // inline elements have no box
    if (onlyTables(el)) continue;
    const right = el.getBoundingClientRect().left + el.clientWidth;
    const widest = [...el.children].filter((child) => child.tagName !== "TABLE")
      .sort((a, b) => b.getBoundingClientRect().right - a.getBoundingClientRect().right)[0];
    const culprit = widest && widest.getBoundingClientRect().right > right ? ` (widest child: ${name(widest)} `
      + `"${(widest.textContent || "").trim().slice(0, 60)}")` : "";
    out.push(`${name(el)}: ${el.scrollWidth} > ${el.clientWidth}${culprit}`);
  }
  return out;
}
"""


def _open(lab: Any, front_end: str, name: str) -> None:
    (lab.open if front_end == "jupyterlab" else lab.open_notebook7)(name)


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_an_invalid_config_error_is_shown_once_with_file_key_and_line(lab: Any, front_end: str) -> None:
    project(lab)
    lab.write_notebook("broken.ipynb", [setup_cell(), "%synth_train -c broken.toml --backend local --yes"])
    _open(lab, front_end, "broken.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    shown = lab.wait_output(1, "UsageError")
    assert shown.count("trainer_mode is required") == 1, shown
    assert shown.count("invalid RL config") == 1, shown
    assert "broken.toml:6 [model.trainer_mode]" in shown
    assert "Traceback" not in shown


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_a_monitor_panel_never_scrolls_sideways_at_640_px(lab: Any, front_end: str) -> None:
    project(lab)
    lab.write_notebook("narrow.ipynb", [setup_cell(speed=2), "gepa = %synth_train -c gepa.toml --backend local --yes",
                                        "sft = %synth_train -c sft.toml --backend local --yes"])
    lab.page.set_viewport_size({"width": 640, "height": 900})
    _open(lab, front_end, "narrow.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    lab.run_cell(2)  # the SFT job plays beside the GEPA one: its end is looked at once the GEPA job's is
    cell = lab.cell(1)
    outputs = cell.locator(".jp-OutputArea")
    cell.locator(".synth-monitor[data-status='running']").wait_for(timeout=120_000)
    cell.locator("img.synth-chart").wait_for(timeout=120_000)
    cell.locator(".synth-controls").wait_for()
    lab.screenshot(f"{front_end}-640px-running", cell)
    wide = outputs.evaluate(_OVERFLOWING)
    assert wide == [], "running:\n" + "\n".join(wide)
    cell.locator(".synth-monitor[data-status='succeeded']").wait_for(timeout=300_000)
    cell.get_by_text("Prompt-learning summary").wait_for(timeout=60_000)
    lab.screenshot(f"{front_end}-640px-ended", cell)
    wide = outputs.evaluate(_OVERFLOWING)
    assert wide == [], "ended:\n" + "\n".join(wide)
    # an SFT job's end names its bundle's folder (``.synth_nb/runs/<job id>/``) as a code span in the summary
    # and in the row's last message: a path with no space in it wraps too
    sft = lab.cell(2)
    sft.locator(".synth-monitor[data-status='succeeded']").wait_for(timeout=300_000)
    said = "Wrote the job's bundle to .synth_nb/runs/"
    sft.locator(".synth-controls-snapshot", has_text=said).wait_for(timeout=60_000)
    sft.locator(".jp-RenderedMarkdown code", has_text=".synth_nb/runs/").wait_for()
    lab.screenshot(f"{front_end}-640px-sft-ended", sft)
    wide = sft.locator(".jp-OutputArea").evaluate(_OVERFLOWING)
    assert wide == [], "SFT ended:\n" + "\n".join(wide)
