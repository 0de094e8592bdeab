"""The wizard in real JupyterLab and Notebook 7 (headless Chromium): pick, fix, preview, submit.

The project has a valid prompt-learning config, an invalid RL config and a ``.env`` with only
``SYNTH_API_KEY``; the missing ``ENVIRONMENT_API_KEY`` is pasted through the UI, then the backend is
switched to ``local`` on step 1. Jobs go to an embedded local backend that replays bundled recordings
(no task app is needed: the ``.env`` skips its health check), so nothing trains and nothing leaves
127.0.0.1. ``test_wizard_journeys.py`` walks the journeys of a newcomer in more detail.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notebook"))
from _wizard_support import CANARIES, CANARY_PASTED, CANARY_SYNTH, make_project  # noqa: E402

SETUP = (
    "%load_ext synth_nb\n"
    "from synth_nb.local import start_backend\n"
    "from synth_nb.pipeline import use_local_backend\n"
    "from synth_nb.notebook.wizard import Wizard\n"
    "from synth_nb.job import JobRegistry\n"
    "use_local_backend(start_backend(default_executor='replay', executor_options={'replay': {'speed': 20}}))"
)
#: replayed jobs need no task app
SKIP_TASK_APP = "SYNTH_SKIP_TASK_APP_HEALTH_CHECK=1\n"
CELLS = [
    SETUP,
    "%synth_train",
    "print('SENT', len(JobRegistry('.').list()))",
    "print('JOB_IDS', json.dumps([j.id for j in Wizard.latest.jobs]))".replace("json.dumps", "__import__('json').dumps"),
]


def wizard_step(lab, step: str):  # type: ignore[no-untyped-def]
    wizard = lab.page.locator(".synth-wizard")
    wizard.locator(f"[data-testid=step-{step}]").click()
    return wizard


@pytest.mark.browser
def test_wizard_walkthrough_in_jupyterlab_and_notebook7(lab) -> None:  # type: ignore[no-untyped-def]
    make_project(lab.folder)
    (lab.folder / ".env").write_text(f"SYNTH_API_KEY={CANARY_SYNTH}\n{SKIP_TASK_APP}")
    lab.write_notebook("wizard.ipynb", CELLS)
    lab.open("wizard.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    page = lab.page
    wizard = page.locator(".synth-wizard")
    wizard.wait_for()
    lab.screenshot("wizard-opened", wizard)

    # 1. configs: two are valid, so none is ticked until one is picked (ticking another never adds a job)
    assert not wizard.locator("[data-testid='config-gepa.toml']").is_checked()
    assert not wizard.locator("[data-testid='config-sft.toml']").is_checked()
    assert wizard_step(lab, "submit").locator("button.synth-submit").get_attribute("aria-disabled") == "true"
    assert "Select at least one config." in wizard.locator(".synth-blockers").inner_text()
    wizard_step(lab, "configs").locator("[data-testid='config-gepa.toml']").check()
    # the invalid one shows its badge and first error; submit is refused with it selected
    wizard.locator("[data-testid='config-broken.toml']").check()
    broken_row = wizard.locator(".synth-config", has_text="broken.toml")
    assert broken_row.locator(".synth-badge").inner_text() == "invalid"
    assert "trainer_mode" in broken_row.locator(".synth-error").inner_text()
    submit = wizard_step(lab, "submit").locator("button.synth-submit")
    # the kernel recomputes the blockers after the ticks reach it: wait for them, then read
    wizard.locator(".synth-blockers", has_text="broken.toml is invalid").wait_for(timeout=30_000)
    assert submit.get_attribute("aria-disabled") == "true"
    lab.screenshot("invalid-config-blocks-submit", wizard)
    wizard_step(lab, "configs").locator("[data-testid='config-broken.toml']").uncheck()
    assert wizard.locator("[data-testid='config-gepa.toml']").is_checked()

    # 2. secrets: masked values with their source; the missing key is pasted and the field emptied
    wizard_step(lab, "secrets")
    env_key = wizard.locator("[data-testid=secret-ENVIRONMENT_API_KEY]")
    synth_key = wizard.locator("[data-testid=secret-SYNTH_API_KEY]")
    assert env_key.inner_text() == "missing"
    assert synth_key.inner_text() == f"found in .env (••••{CANARY_SYNTH[-4:]})"  # for the hosted default
    assert wizard_step(lab, "submit").locator("button.synth-submit").get_attribute("aria-disabled") == "true"
    wizard_step(lab, "secrets")
    field = wizard.get_by_label("Paste ENVIRONMENT_API_KEY")
    field.fill(CANARY_PASTED)
    wizard.get_by_role("button", name="Use pasted ENVIRONMENT_API_KEY").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=secret-ENVIRONMENT_API_KEY]').textContent.includes('pasted')")
    assert env_key.inner_text() == f"pasted into the wizard (••••{CANARY_PASTED[-4:]})"
    assert wizard.get_by_label("Paste ENVIRONMENT_API_KEY").input_value() == ""
    lab.screenshot("masked-keys", wizard)

    # back to step 1: the embedded backend brings its own SYNTH_API_KEY, the pasted key stays
    backend = wizard_step(lab, "configs").locator("[data-testid=override-backend]")
    backend.fill("local")
    backend.press("Enter")
    page.wait_for_function("() => (document.querySelector('[data-testid=backend-now]') || {}).textContent"
                           "?.includes('embedded local backend')")
    wizard_step(lab, "secrets")
    assert re.fullmatch(r"provided by the embedded local backend \(••••\S{4}\)", synth_key.inner_text())
    assert env_key.inner_text() == f"pasted into the wizard (••••{CANARY_PASTED[-4:]})"

    # 3. overrides: a wrong value is flagged inline and blocks submit; a good one updates the preview
    wizard_step(lab, "overrides")
    task_url = wizard.locator("[data-testid=override-task_url]")
    assert task_url.input_value() == "http://127.0.0.1:8102"
    task_url.fill("localhost:8111")
    task_url.press("Enter")
    error = wizard.locator("[data-testid=override-error-task_url]")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=override-error-task_url]').classList.contains('synth-error')")
    assert "http" in error.inner_text()
    assert wizard.locator("[data-testid=override-task_url]").get_attribute("aria-invalid") == "true"
    lab.screenshot("override-flagged", wizard)
    assert wizard_step(lab, "submit").locator("button.synth-submit").get_attribute("aria-disabled") == "true"
    task_url = wizard_step(lab, "overrides").locator("[data-testid=override-task_url]")
    task_url.fill("http://127.0.0.1:8111")
    task_url.press("Enter")
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=override-error-task_url]').classList.contains('synth-error')")
    assert error.get_attribute("class") == "synth-hint"

    # nothing was sent by any of the refused attempts
    lab.run_cell(2)
    assert "SENT 0" in lab.wait_output(2, "SENT")

    # 4. preview: the masked payload carries the new task URL and no secret
    wizard_step(lab, "preview")
    payload = wizard.locator("[data-testid='preview-gepa.toml'] pre.synth-json")
    payload.wait_for()
    assert '"task_app_url": "http://127.0.0.1:8111"' in payload.inner_text()
    assert f"••••{CANARY_PASTED[-4:]}" in payload.inner_text()
    lab.screenshot("preview", wizard)

    # 5. submit: keyboard-operable, shows the job id, hands over to the monitor panel
    submit = wizard_step(lab, "submit").locator("button.synth-submit")
    page.wait_for_function(  # aria-disabled: the button stays focusable and says why it is unavailable
        "() => document.querySelector('.synth-wizard button.synth-submit')?.getAttribute('aria-disabled') === 'false'",
        timeout=15_000)
    submit.focus()
    page.keyboard.press("Enter")
    [shown_id] = lab.submitted_ids(1)  # the wizard is replaced by what it sent
    # the focus it held goes to the job's panel row (Cancel), not to the page
    page.wait_for_function("() => document.activeElement?.closest('.synth-controls') !== null", timeout=60_000)
    # the monitor panel opens in the same cell, under the wizard, and follows the job to its end
    monitor = lab.cell(1).locator(".synth-monitor")
    monitor.wait_for(timeout=60_000)
    # the screenshot waits for the panel's final redraw, which sets data-status on its root
    finished = lab.cell(1).locator(".synth-monitor[data-status='succeeded']")
    finished.wait_for(timeout=90_000)
    assert monitor.get_attribute("data-status") == "succeeded"
    assert "succeeded" in monitor.inner_text()
    lab.screenshot("submitted-and-monitored", lab.cell(1))
    lab.run_cell(3)
    ids = json.loads(lab.wait_output(3, "JOB_IDS").split("JOB_IDS", 1)[1].strip().splitlines()[0])
    assert ids == [shown_id]

    assert not any(c in page.content() for c in CANARIES)

    # the same panel in the dark theme: colours come from JupyterLab's theme variables
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    lab.run_cell(1)  # the wizard that submitted is over: the cell run again opens a new one
    wizard.wait_for()
    wizard_step(lab, "configs")
    colors = wizard.evaluate("el => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]")
    assert colors[0] != colors[1]
    lab.screenshot("dark-theme", wizard)
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
    lab.save()
    saved = (lab.folder / "wizard.ipynb").read_text()
    assert shown_id in saved
    assert not any(c in saved for c in CANARIES)

    # Notebook 7 renders the same wizard (the journeys test submits from it too)
    lab.shutdown_kernels()
    lab.open_notebook7("wizard.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    wizard = page.locator(".synth-wizard")
    wizard.wait_for()
    assert wizard.locator("[data-testid='config-gepa.toml']").is_visible()
    assert not wizard.locator("[data-testid='config-gepa.toml']").is_checked()
    assert wizard.locator("[data-testid=step-configs]").get_attribute("aria-current") == "step"
    lab.screenshot("notebook7", wizard)
