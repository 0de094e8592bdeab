"""Keyboard and screen-reader use of the wizard and the monitor in real JupyterLab and Notebook 7.

The wizard is completed with the keyboard alone, focus is checked after every action, keys typed in the
widgets must leave the notebook alone (JupyterLab's command-mode shortcuts: ``a``, ``d d``, arrows),
names, roles, states and live regions are read from Chromium's accessibility tree (CDP), and the
layout and colours are measured in the page: no clipped control in a 640 px window (200% zoom of a
1280 px screen), text contrast >= 4.5:1 and focus rings and other indicators >= 3:1, light and dark.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from .a11y_support import (
    ax_node,
    clipped_controls,
    contrast_problems,
    flush,
    focus_ring_problems,
    notebook_shape,
    set_theme,
    tab_to,
    wait_active,
    wait_live,
)
from .test_wizard import SETUP

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notebook"))
from _wizard_support import CANARIES, CANARY_PASTED, CANARY_SYNTH, make_project  # noqa: E402

pytestmark = pytest.mark.browser

#: keys that are JupyterLab command-mode shortcuts (insert above/below, markdown, code, delete, move)
SHORTCUT_KEYS = ["a", "b", "m", "y", "d", "d", "ArrowDown", "ArrowUp", "Shift+Enter"]
SETUP_WITH_BACKEND = (
    "%load_ext synth_nb\n"
    "from synth_nb.local import start_backend\n"
    "from synth_nb.pipeline import use_local_backend\n"
    "backend = start_backend(default_executor='replay', executor_options={'replay': {'speed': 20}})\n"
    "use_local_backend(backend)"
)
STEP1_TAB_ORDER = ["step:secrets", "step:overrides", "step:preview", "step:submit", "cfg:broken.toml",
                   "cfg:gepa.toml", "cfg:sft.toml", "rescan", "backend", "back", "next"]


def _open_wizard(lab: Any, cells: list[str]) -> Any:
    make_project(lab.folder)
    # ENVIRONMENT_API_KEY is pasted; replayed jobs need no task app
    (lab.folder / ".env").write_text(f"SYNTH_API_KEY={CANARY_SYNTH}\nSYNTH_SKIP_TASK_APP_HEALTH_CHECK=1\n")
    lab.write_notebook("a11y.ipynb", cells)
    return cells


def _press_shortcuts(page: Any, shape: dict[str, Any], keys: list[str] = SHORTCUT_KEYS) -> None:
    for key in keys:
        page.keyboard.press(key)
    flush(page)
    assert notebook_shape(page) == shape, "a key typed in the widget reached the notebook"


def test_wizard_by_keyboard_alone_then_the_monitor_in_jupyterlab(lab) -> None:  # type: ignore[no-untyped-def]
    _open_wizard(lab, [SETUP, "%synth_train --backend local"])
    lab.open("a11y.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    page = lab.page
    wizard = page.locator(".synth-wizard")
    wizard.wait_for()
    shape = notebook_shape(page)
    live = wizard.locator("[data-testid=wizard-live]")
    live.evaluate("el => { el.__synthProbe = 'kept'; }")  # the live region must stay the same node

    # 1. configs: Tab order follows the visual order; keys stay in the widget; focus stays on each control
    wizard.locator("[data-key='step:configs']").focus()
    assert tab_to(page, "next") == STEP1_TAB_ORDER
    # two valid configs: none is ticked; the step flags no problem before anything was done on it
    assert ax_node(page, wizard.locator("[data-key='step:configs']"))["name"] == "1. Configs"
    tab_to(page, "cfg:gepa.toml", back=True)
    page.keyboard.press("Space")
    wizard.locator("[data-testid=step-configs] .synth-step-problems").wait_for(state="detached")
    wait_active(page, "cfg:gepa.toml")
    tab_to(page, "cfg:broken.toml", back=True)
    _press_shortcuts(page, shape)
    assert not wizard.locator("[data-key='cfg:broken.toml']").is_checked()
    page.keyboard.press("Space")
    wizard.locator("[data-testid=step-configs] .synth-step-problems").wait_for()
    flush(page)
    wait_active(page, "cfg:broken.toml")
    box = ax_node(page, wizard.locator("[data-key='cfg:broken.toml']"))
    assert (box["role"], box["name"], box["invalid"], box["checked"]) == ("checkbox", "broken.toml (rl)", "true", "true")
    assert "invalid" in box["description"] and "trainer_mode" in box["description"]
    assert ax_node(page, wizard.locator("[data-key='step:configs']"))["name"] == "1. Configs, 1 problem"
    lab.screenshot("invalid-config-selected", wizard)
    page.keyboard.press("Space")
    wizard.locator("[data-testid=step-configs] .synth-step-problems").wait_for(state="detached")
    wait_active(page, "cfg:broken.toml")

    tab_to(page, "rescan")
    page.keyboard.press("Enter")
    wait_live(page, live, "Folder rescanned: 3 configs found, 1 invalid.")
    wait_active(page, "rescan")
    status = ax_node(page, live)
    assert (status["role"], status["live"], status["atomic"]) == ("status", "polite", True)

    # the backend, chosen before the keys: its error is tied to the field; leaving the field keeps focus
    tab_to(page, "backend")
    page.keyboard.press("Control+a")
    page.keyboard.type("ftp://nowhere")
    page.keyboard.press("Tab")
    wizard.locator("[data-testid=override-backend-msg][role=alert]").wait_for()
    flush(page)
    wait_active(page, "back")
    backend = ax_node(page, wizard.locator("[data-key=backend]"))
    assert backend["invalid"] == "true" and "http" in backend["description"]
    lab.screenshot("backend-error", wizard)
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Control+a")
    page.keyboard.type("local")
    page.keyboard.press("Tab")
    wizard.locator("[data-testid=override-backend-msg][role=alert]").wait_for(state="detached")
    flush(page)
    wait_active(page, "back")

    # 2. secrets: Next keeps focus; the pasted key is taken with Use and announced; the select keeps its keys
    tab_to(page, "next")
    page.keyboard.press("Enter")
    wait_live(page, live, "Step 2 of 5: Secrets.")  # the embedded backend has keys for its own task apps
    wait_active(page, "next")
    tab_to(page, "paste:ENVIRONMENT_API_KEY", back=True)
    page.keyboard.type(CANARY_PASTED)  # letters such as a, b, d, m are shortcuts in command mode
    tab_to(page, "use:ENVIRONMENT_API_KEY")
    page.keyboard.press("Enter")
    wait_live(page, live, f"ENVIRONMENT_API_KEY accepted: pasted into the wizard (••••{CANARY_PASTED[-4:]}).")
    wait_active(page, "use:ENVIRONMENT_API_KEY")
    assert wizard.get_by_label("Paste ENVIRONMENT_API_KEY").input_value() == ""
    assert notebook_shape(page) == shape
    tab_to(page, "env-file")
    page.keyboard.press("ArrowDown")  # moves the option, not the notebook's cell selection
    page.wait_for_function("() => document.activeElement.value === '.env'")
    wait_live(page, live, "Keys are now read from .env (then the environment).")
    flush(page)
    wait_active(page, "env-file")
    assert notebook_shape(page) == shape
    page.keyboard.press("ArrowUp")
    page.wait_for_function("() => document.activeElement.value === ''")
    lab.screenshot("secrets-by-keyboard", wizard)

    # 3. overrides: errors are tied to their fields and announced
    tab_to(page, "next")
    page.keyboard.press("Enter")
    wait_live(page, live, "Step 3 of 5: Overrides.")
    tab_to(page, "ov:task_url", back=True)
    page.keyboard.press("Control+a")
    page.keyboard.type("localhost:8111")
    page.keyboard.press("Enter")
    wizard.locator("[data-testid=override-error-task_url][role=alert]").wait_for()
    wait_active(page, "ov:task_url")
    task_url = ax_node(page, wizard.locator("[data-key='ov:task_url']"))
    assert task_url["invalid"] == "true" and "http" in task_url["description"]
    page.keyboard.press("Control+a")
    page.keyboard.type("http://127.0.0.1:8111")
    page.keyboard.press("Enter")
    wizard.locator("[data-testid=override-error-task_url][role=alert]").wait_for(state="detached")
    wait_active(page, "ov:task_url")

    # 4. preview, then submit: Next stays focused even where it has nowhere to go; Submit keeps focus
    tab_to(page, "next")
    page.keyboard.press("Enter")
    wait_live(page, live, "Step 4 of 5: Preview.")
    page.keyboard.press("Enter")
    wait_live(page, live, "Step 5 of 5: Submit.")
    wait_active(page, "next")
    assert wizard.locator("[data-key=next]").get_attribute("aria-disabled") == "true"
    wizard.locator("[data-key=submit][aria-disabled=false]").wait_for(timeout=30_000)
    tab_to(page, "submit", back=True)
    page.keyboard.press("Enter")
    # the wizard is replaced by what it sent; the focus it held goes to the new job's panel row, not the page
    [job_id] = lab.submitted_ids(1)
    page.wait_for_function("() => document.activeElement?.closest('.synth-controls') !== null", timeout=60_000)
    assert notebook_shape(page) == shape
    lab.screenshot("submitted-by-keyboard", lab.cell(1))

    _check_monitor(lab, job_id, shape)
    assert not any(c in page.content() for c in CANARIES)


def _check_monitor(lab: Any, job_id: str, shape: dict[str, Any]) -> None:
    """The monitor under the wizard: one live region kept across refreshes, alt text, button names and states."""
    page, cell = lab.page, lab.cell(1)
    region = cell.locator(".synth-live-region")
    cell.locator(".synth-monitor[data-status='succeeded']").wait_for(timeout=90_000)
    cell.get_by_text("Prompt-learning summary").wait_for(timeout=60_000)  # the panel's last update
    # under the wizard the panel's outputs are plain outputs of the wizard's cell, updated by display id:
    # the controls row and its live region stay in place (test_wizard_journeys.py checks focus on Cancel)
    # one announcement for the end: the status, why it stopped, then where the job's files were written
    wait_live(page, region, re.compile(rf"Job {job_id}: succeeded\. [A-Z].+\. "
                                       rf"Wrote summary\.md and summary_curve\.png to results/{job_id}/"))
    assert ax_node(page, region)["role"] == "status"

    chart = cell.locator("img.synth-chart")
    alt = chart.get_attribute("alt") or ""
    assert re.fullmatch(r"Prompt learning score chart: .*best so far \d\.\d+ at trial \d+.*; "
                        r"baseline \(held-out\) \d\.\d+; best prompt \(held-out\) \d\.\d+\.", alt), alt
    table_id, values_id = (chart.get_attribute("aria-describedby") or "").split()
    assert page.locator(f"table#{table_id} tbody#{values_id}").count() == 1
    described = ax_node(page, chart)
    assert described["role"] in ("image", "img") and described["name"] == alt
    assert re.match(r"latest values of Prompt learning score .*best so far \d+ [\d.]+", described["description"])

    controls = cell.locator(".synth-controls")
    names = []
    for i in range(controls.locator("button:visible").count()):  # Cancel's confirmation is hidden
        node = ax_node(page, controls.locator("button:visible").nth(i))
        names.append(node["name"])
        assert node["name"] == node["name"].strip() and not re.search(r"[\ue000-\uf8ff]", node["name"])
    assert names == ["Job finished", "Show all events"]
    toggle = controls.get_by_role("button", name="Show all events")
    assert ax_node(page, toggle)["pressed"] == "false"
    toggle.focus()
    _press_shortcuts(page, shape, [k for k in SHORTCUT_KEYS if "Enter" not in k])  # Enter would press it
    page.keyboard.press("Space")
    page.wait_for_function("() => document.activeElement.getAttribute('aria-pressed') === 'true'")
    assert ax_node(page, toggle)["pressed"] == "true"
    # the row it holds the focus in stays until the focus leaves; the files are linked in the summary
    assert cell.get_by_role("link", name="summary.md").count() == 1
    lab.screenshot("monitor", cell)
    # the focus leaves the row: the row becomes text, and the focus is where the Tab put it, not on the page
    page.keyboard.press("Tab")
    cell.locator(f".synth-controls-snapshot[data-job-id='{job_id}']").wait_for(timeout=60_000)
    flush(page)
    assert cell.locator(".synth-controls").count() == 0
    assert page.evaluate("() => document.activeElement && document.activeElement !== document.body"), "focus dropped"


def test_wizard_and_monitor_reflow_and_contrast_light_and_dark(lab) -> None:  # type: ignore[no-untyped-def]
    monitor_cell = (  # the bundled GEPA recording, slowed down so that Cancel stays useful throughout
        "from synth_nb.client import AsyncSynthClient\nfrom synth_nb.flows import get_flow\n"
        "from synth_nb.job import Job\nfrom synth_nb.notebook.show import show_job\n"
        "client = AsyncSynthClient(backend.url + '/api', backend.api_key)\n"
        "endpoints = get_flow('prompt_learning').endpoints\n"
        "doc = await client.create_job(endpoints, {'metadata': {'local_executor': 'replay', 'recording': 'gepa', "
        "'replay_speed': 0.1}})\n"
        "await client.start(endpoints, doc['id'])\n"
        "panel = show_job(Job(doc['id'], 'prompt_learning', client, endpoints=endpoints, poll_interval=0.5))"
    )
    _open_wizard(lab, [SETUP_WITH_BACKEND, "%synth_train --backend local", monitor_cell])
    page = lab.page
    page.set_viewport_size({"width": 640, "height": 900})  # a 1280 px wide screen at 200% zoom
    lab.open("a11y.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    lab.run_cell(2)
    wizard = page.locator(".synth-wizard")
    wizard.wait_for()
    monitor = lab.cell(2)
    monitor.locator(".synth-monitor[data-status='running']").wait_for(timeout=60_000)
    monitor.locator("img.synth-chart").wait_for()
    region = monitor.locator(".synth-live-region")
    region.evaluate("el => { el.__synthProbe = 'kept'; }")
    wizard.locator("[data-testid='config-gepa.toml']").check()  # two valid configs: none is ticked at first
    wizard.locator("[data-testid=step-configs] .synth-step-problems").wait_for(state="detached")

    for theme in ("light", "dark"):
        set_theme(page, theme)
        for step in ("configs", "secrets", "overrides", "preview", "submit"):
            wizard.locator(f"[data-testid=step-{step}]").click()
            page.wait_for_function("s => document.querySelector('.synth-wizard [aria-current=step]')"
                                   ".dataset.step === s", arg=step)
            if step == "overrides":
                field = wizard.locator("[data-testid=override-task_url]")
                field.fill("localhost:8111")
                field.press("Enter")
                wizard.locator("[data-testid=override-error-task_url][role=alert]").wait_for()
            flush(page)
            assert clipped_controls(page, ".synth-wizard") == [], f"{step} ({theme}) clips a control at 640 px"
            assert contrast_problems(page, ".synth-wizard") == [], f"{step} ({theme})"
            assert focus_ring_problems(page, ".synth-wizard") == [], f"{step} ({theme})"
            if step in ("secrets", "overrides"):
                lab.screenshot(f"640px-{theme}-{step}", wizard)
        wizard.locator("[data-testid=step-overrides]").click()
        field = wizard.locator("[data-testid=override-task_url]")
        field.fill("http://127.0.0.1:8102")
        field.press("Enter")
        monitor.scroll_into_view_if_needed()
        assert clipped_controls(page, ".synth-monitor") == []
        assert contrast_problems(page, ".synth-monitor") == [], f"monitor ({theme})"
        controls = monitor.locator(".synth-controls")
        assert clipped_controls(page, controls) == [], f"monitor controls ({theme})"
        assert contrast_problems(page, controls) == [], f"monitor controls ({theme})"
        assert focus_ring_problems(page, controls) == [], f"monitor controls ({theme})"
        lab.screenshot(f"640px-{theme}-monitor", monitor)

    # refreshes of the status leave the focused Cancel button and the live region in place
    controls.locator("button.synth-cancel").focus()
    before = monitor.locator(".synth-progress-label").inner_text()
    page.wait_for_function("t => document.querySelector('.synth-progress-label').textContent !== t", arg=before,
                           timeout=60_000)
    assert page.evaluate("() => document.activeElement.classList.contains('synth-cancel')")
    assert region.evaluate("el => el.__synthProbe") == "kept", "the monitor's live region was replaced"
    # keys typed on Cancel stay in the panel (an ipywidgets button would let "a" insert a cell)
    _press_shortcuts(page, notebook_shape(page), [k for k in SHORTCUT_KEYS if "Enter" not in k])
    assert page.evaluate("() => document.activeElement.classList.contains('synth-cancel')")
    # Cancel by keyboard: it asks first (focus on "Keep running"), then the live region reports the
    # confirmed state
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement.classList.contains('synth-keep-running')")
    question = ax_node(page, controls.locator(".synth-confirm"))
    assert (question["role"], question["name"]) == ("group", "Cancel this job?"), question
    page.keyboard.press("Shift+Tab")
    page.wait_for_function("() => document.activeElement.classList.contains('synth-confirm-cancel')")
    page.keyboard.press("Enter")
    # the pressed button goes away and Cancel is off: the focus moves to the next control, not the page
    page.wait_for_function("() => document.activeElement.classList.contains('synth-toggle')")
    job_id = monitor.locator(".synth-monitor").get_attribute("data-job-id")
    # (the cancel's confirmation, then the stop reason the panel ends on: a later frame may replace the first)
    wait_live(page, region, re.compile(rf"Job {job_id}: cancelled\. (The backend confirmed status cancelled|"
                                       r"Cancelled by the panel's Cancel button)\..*"), timeout=90_000)
    set_theme(page, "light")


def test_wizard_keyboard_in_notebook7(lab) -> None:  # type: ignore[no-untyped-def]
    _open_wizard(lab, [SETUP, "%synth_train --backend local"])
    lab.open_notebook7("a11y.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    page = lab.page
    wizard = page.locator(".synth-wizard")
    wizard.wait_for()
    shape = notebook_shape(page)
    live = wizard.locator("[data-testid=wizard-live]")
    wizard.locator("[data-key='step:configs']").focus()
    assert tab_to(page, "next") == STEP1_TAB_ORDER
    tab_to(page, "cfg:sft.toml", back=True)
    _press_shortcuts(page, shape)
    tab_to(page, "cfg:gepa.toml", back=True)
    page.keyboard.press("Space")  # two valid configs: none is ticked until one is picked
    wizard.locator("[data-testid=step-configs] .synth-step-problems").wait_for(state="detached")
    wait_active(page, "cfg:gepa.toml")
    tab_to(page, "rescan")
    page.keyboard.press("Enter")
    wait_live(page, live, "Folder rescanned: 3 configs found, 1 invalid.")
    wait_active(page, "rescan")
    tab_to(page, "next")
    page.keyboard.press("Enter")
    wait_live(page, live, "Step 2 of 5: Secrets.")  # the embedded backend has keys for its own task apps
    wait_active(page, "next")
    tab_to(page, "paste:ENVIRONMENT_API_KEY", back=True)
    page.keyboard.type(CANARY_PASTED)
    page.keyboard.press("Enter")
    wait_live(page, live, f"ENVIRONMENT_API_KEY accepted: pasted into the wizard (••••{CANARY_PASTED[-4:]}).")
    wait_active(page, "paste:ENVIRONMENT_API_KEY")
    assert notebook_shape(page) == shape
    lab.screenshot("notebook7-keyboard", wizard)
    assert not any(c in page.content() for c in CANARIES)
    for theme in ("light", "dark"):
        set_theme(page, theme)
        assert contrast_problems(page, ".synth-wizard") == [], f"Notebook 7 ({theme})"
        assert focus_ring_problems(page, ".synth-wizard") == [], f"Notebook 7 ({theme})"
        lab.screenshot(f"notebook7-{theme}", wizard)
    set_theme(page, "light")
