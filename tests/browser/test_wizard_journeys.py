"""The wizard journeys a newcomer takes, walked in real JupyterLab and Notebook 7 (headless Chromium).

* A GEPA job submitted from the wizard leaves its chart PNG and summary as plain outputs of the wizard's
  cell: they are there after save → close → reopen (no kernel), and in ``jupyter nbconvert --to html``.
* A typo'd key (``n_epoch``) is a yellow badge in the picker, listed on Preview and Submit and printed
  by ``--yes``; the preview folds long seed lists, names upload files and sizes, Submit says how many jobs
  go where, and sending the same jobs again takes a second, deliberate action.
* The backend is chosen on step 1, before the keys it decides; sources read as plain words; a pasted key
  the kernel has not confirmed says so.
* Under the wizard, the monitor's refreshes leave focus on Cancel and keep its one live region.

Jobs go to an embedded local backend that replays bundled recordings (no task app, nothing trains).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .a11y_support import contrast_problems, flush, set_theme, wait_active, wait_live

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notebook"))
from _wizard_support import CANARIES, CANARY_ENV, CANARY_PASTED, CANARY_SYNTH, make_project  # noqa: E402

pytestmark = pytest.mark.browser

MODEL_NOT_FOUND = "Error displaying widget: model not found"
TYPO = "unknown key hyperparameters.n_epoch (did you mean 'n_epochs'?)"


def setup_cell(speed: float = 20) -> str:
    return ("%load_ext synth_nb\n"
            "from synth_nb.local import start_backend\n"
            "from synth_nb.pipeline import use_local_backend\n"
            "from synth_nb.notebook.wizard import Wizard\n"
            "from synth_nb.job import JobRegistry\n"
            f"use_local_backend(start_backend(default_executor='replay', executor_options={{'replay': {{'speed': {speed}}}}}))")


def project(lab: Any, *, env: str | None = None) -> Path:
    """The shared test project, with 80 GEPA train seeds and a typo'd SFT key; replays need no task app."""
    folder = make_project(lab.folder)
    seeds = ", ".join(str(i) for i in range(80))
    gepa = folder / "gepa.toml"
    gepa.write_text(gepa.read_text().replace("train_seeds = [0, 1, 2]", f"train_seeds = [{seeds}]"))
    sft = folder / "sft.toml"
    sft.write_text(sft.read_text() + "\n[hyperparameters]\nn_epoch = 3\n")
    keys = env if env is not None else f"SYNTH_API_KEY={CANARY_SYNTH}\nENVIRONMENT_API_KEY={CANARY_ENV}\n"
    (folder / ".env").write_text(keys + "SYNTH_SKIP_TASK_APP_HEALTH_CHECK=1\n")
    return folder


def open_wizard(lab: Any, name: str, front_end: str = "jupyterlab", *, speed: float = 20,
                cells: tuple[str, ...] = ()) -> tuple[Path, Any]:
    """A notebook ``name`` of the setup cell, ``%synth_train --backend local`` and ``cells``, opened in ``front_end``
    with its first two cells run: its path and the wizard."""
    path = lab.write_notebook(name, [setup_cell(speed), "%synth_train --backend local", *cells])
    (lab.open if front_end == "jupyterlab" else lab.open_notebook7)(name)
    lab.run_cell(0)
    lab.run_cell(1)
    wizard = lab.page.locator(".synth-wizard")
    wizard.wait_for()
    return path, wizard


def wizard_at(lab: Any, step: str) -> Any:
    wizard = lab.page.locator(".synth-wizard")
    wizard.locator(f"[data-testid=step-{step}]").click()
    lab.page.wait_for_function("s => document.querySelector('.synth-wizard [aria-current=step]').dataset.step === s",
                               arg=step)
    return wizard


def tick(lab: Any, path: str) -> None:
    """Tick a config on step 1: with several valid ones the wizard opens with none ticked."""
    wizard_at(lab, "configs").locator(f"[data-testid='config-{path}']").check()


def set_backend(lab: Any, value: str) -> None:
    field = wizard_at(lab, "configs").locator("[data-testid=override-backend]")
    field.fill(value)
    field.press("Enter")


def printed(lab: Any, index: int, marker: str) -> Any:
    lab.run_cell(index)
    return json.loads(lab.wait_output(index, marker).split(marker, 1)[1].strip().splitlines()[0])


def saved_outputs(path: Path, index: int) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text())["cells"][index]["outputs"])


def _submit_and_follow(lab: Any) -> str:
    tick(lab, "gepa.toml")
    wizard = wizard_at(lab, "submit")
    submit = wizard.locator("button.synth-submit[aria-disabled=false]")
    submit.wait_for(timeout=30_000)
    assert re.fullmatch(r"1 job → http://127\.0\.0\.1:\d+/api \(the embedded local backend\)",
                        wizard.locator("[data-testid=destination]").inner_text())
    submit.click()
    [job_id] = lab.submitted_ids(1)
    cell = lab.cell(1)
    cell.locator(f".synth-monitor[data-job-id='{job_id}'][data-status='succeeded']").wait_for(timeout=120_000)
    cell.get_by_text(job_id).last.wait_for()
    cell.locator("img").first.wait_for(timeout=60_000)
    return job_id


def _results_are_plain(outputs: list[dict[str, Any]], job_id: str) -> None:
    """The saved cell holds the chart as a PNG and the summary as HTML/Markdown, outside any widget."""
    plain = [o for o in outputs if "application/vnd.jupyter.widget-view+json" not in o.get("data", {})]
    assert any("image/png" in o["data"] or "data:image/png;base64," in "".join(o["data"].get("text/html", ""))
               for o in plain), [list(o.get("data", {})) for o in outputs]
    text = json.dumps(plain)
    assert job_id in text and "succeeded" in text
    assert any("summary" in json.dumps(o["data"]).lower() for o in plain if "image/png" not in o["data"])


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_a_wizard_jobs_chart_and_summary_survive_save_close_reopen(lab: Any, front_end: str) -> None:
    project(lab)
    lab.write_notebook("journey.ipynb", [setup_cell(), "%synth_train --backend local"])
    open_notebook = lab.open if front_end == "jupyterlab" else lab.open_notebook7
    open_notebook("journey.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    lab.page.locator(".synth-wizard").wait_for()
    job_id = _submit_and_follow(lab)
    lab.cell(1).get_by_text(re.compile("summary", re.I)).first.wait_for(timeout=60_000)
    lab.screenshot(f"{front_end}-finished", lab.cell(1))
    lab.assert_clean(lab.cell(1), f"wizard and panel in {front_end}")
    lab.save()
    path = lab.folder / "journey.ipynb"
    outputs = saved_outputs(path, 1)
    _results_are_plain(outputs, job_id)
    widgets = sum("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)

    # close: no kernel is left, so no widget model can come back; reopen the saved file
    lab.shutdown_kernels()
    lab.page.goto("about:blank")
    open_notebook("journey.ipynb")
    cell = lab.cell(1)
    cell.locator("img").first.wait_for(timeout=60_000)
    shown = cell.locator(".jp-OutputArea").inner_text()
    assert job_id in shown and "succeeded" in shown
    assert re.search("summary", shown, re.I)
    # what was submitted is still said, in plain output, though the wizard's widget is gone
    submitted = rf"Submitted 1 job to http://127\.0\.0\.1:\d+/api:\s*\S+\.toml \(prompt_learning\) → {job_id}"
    assert re.search(submitted, shown), shown
    src = cell.locator("img").first.get_attribute("src") or ""
    assert src.startswith(("data:image/png;base64,", "blob:"))
    # only the live controls (wizard, Cancel row) may lack their model; none of the results is a widget
    assert shown.count(MODEL_NOT_FOUND) <= widgets
    lab.screenshot(f"{front_end}-reopened", cell)

    html = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--stdout", str(path)],
                          capture_output=True, text=True, timeout=180, check=True).stdout
    assert "data:image/png;base64," in html and job_id in html and re.search("summary", html, re.I)
    assert re.search(rf"→ <strong class=.synth-job-id.>{job_id}</strong>", html)
    saved = path.read_text()
    assert not any(c in saved or c in html for c in CANARIES)


def test_typo_warnings_preview_and_submit_are_easy_to_check(lab: Any) -> None:
    folder = project(lab)
    lab.write_notebook("check.ipynb", [
        setup_cell(), "%synth_train --backend local",
        "print('SENT', len(JobRegistry('.').list()))",
        "%synth_train -c sft.toml --backend local --yes --no-poll",
    ])
    lab.open("check.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    page = lab.page
    wizard = page.locator(".synth-wizard")
    wizard.wait_for()

    # picker: the typo'd SFT config is valid but flagged yellow, with the warning under it
    badge = wizard.locator("[data-testid='badge-sft.toml']")
    assert badge.inner_text() == "valid · 1 warning"
    assert "synth-badge--warn" in (badge.get_attribute("class") or "")
    assert TYPO in wizard.locator("[data-testid='warnings-sft.toml']").inner_text()
    assert wizard.locator("[data-testid='badge-gepa.toml']").inner_text() == "valid"
    wizard.locator("[data-testid='config-gepa.toml']").check()
    wizard.locator("[data-testid='config-sft.toml']").check()
    for theme in ("light", "dark"):
        set_theme(page, theme)
        assert contrast_problems(page, ".synth-wizard") == [], f"picker ({theme})"
        lab.screenshot(f"picker-warning-{theme}", wizard)
    set_theme(page, "light")

    # a bad backend is reported on the backend field, and the preview says so instead of "select a config"
    set_backend(lab, "ftp://nowhere")
    message = wizard.locator("[data-testid=override-backend-msg][role=alert]")
    message.wait_for()
    assert "must start with http" in message.inner_text()
    assert wizard.locator("[data-testid=override-backend]").get_attribute("aria-invalid") == "true"
    empty = wizard_at(lab, "preview").locator("[data-testid=preview-empty]")
    assert "backend is not usable" in empty.inner_text() and "Select a valid config" not in empty.inner_text()
    lab.screenshot("bad-backend-preview", wizard)
    set_backend(lab, "local")
    wizard.locator("[data-testid=override-backend-msg][role=alert]").wait_for(state="detached")

    # preview: folded seed lists (expandable), the upload named with its size, the warning listed
    wizard_at(lab, "preview")
    gepa = wizard.locator("[data-testid='preview-gepa.toml']")
    folds = gepa.locator("button[data-testid=fold]")
    folds.first.wait_for()
    assert folds.first.inner_text() == "80 seeds: 0…79"
    assert gepa.locator(".synth-line").count() < 100  # 441 lines for the bundled config before folding
    folds.first.click()
    for theme in ("light", "dark"):  # the fold buttons sit on the payload's own background
        set_theme(page, theme)
        assert contrast_problems(page, ".synth-wizard") == [], f"preview ({theme})"
    set_theme(page, "light")
    full = gepa.locator("[data-testid=fold-full]").first
    assert full.inner_text() == json.dumps(list(range(80)))
    assert folds.first.get_attribute("aria-expanded") == "true"
    sft = wizard.locator("[data-testid='preview-sft.toml']")
    size = (folder / "train.jsonl").stat().st_size
    assert sft.locator("[data-testid=upload]").inner_text().strip() == f"uploads train.jsonl ({size} B)"
    assert TYPO in sft.locator("[data-testid='preview-warnings-sft.toml']").inner_text()
    lab.screenshot("preview-folded", wizard)

    # submit: how many jobs go where, the warning again; then the wizard is replaced by what it sent
    wizard_at(lab, "submit")
    assert re.fullmatch(r"2 jobs → http://127\.0\.0\.1:\d+/api \(the embedded local backend\)",
                        wizard.locator("[data-testid=destination]").inner_text())
    assert TYPO in wizard.locator("[data-testid=submit-warnings]").inner_text()
    submit = wizard.locator("button.synth-submit[aria-disabled=false]")
    submit.wait_for(timeout=30_000)
    assert submit.inner_text() == "Submit 2 jobs"
    lab.screenshot("submit-step", wizard)
    submit.click()
    first_ids = lab.submitted_ids(1, count=2)
    sent = lab.cell(1).locator(".synth-wizard-snapshot")
    assert "%synth_train --rerun JOB_ID" in sent.inner_text() and "--fork JOB_ID" in sent.inner_text()
    lab.screenshot("after-submit", lab.cell(1))
    lab.run_cell(2)
    assert "SENT 2" in lab.wait_output(2, "SENT")

    # the cell run again: a new wizard; the same payloads take a second, deliberate action
    lab.run_cell(1)
    wizard.wait_for()
    tick(lab, "gepa.toml")
    tick(lab, "sft.toml")
    wizard_at(lab, "submit")
    again = wizard.get_by_role("button", name="Submit the same again…")
    again.wait_for(timeout=30_000)
    assert wizard.locator("button.synth-submit").count() == 0 and wizard.locator(".synth-primary").count() == 0
    assert "last submitted from this notebook" in wizard.locator(".synth-again").inner_text()
    again.click()
    wizard.get_by_role("button", name="No, keep what I have").click()
    wait_active(page, "again")
    lab.run_cell(2)
    assert "SENT 2" in lab.wait_output(2, "SENT")
    again.click()
    wait_active(page, "again-yes")  # the confirmation takes focus: Enter confirms, Tab reaches "No"
    assert again.get_attribute("aria-expanded") == "true"
    wizard.get_by_role("button", name="Yes, create 2 jobs more").click()
    assert not set(lab.submitted_ids(1, count=2)) & set(first_ids)
    lab.run_cell(2)
    assert "SENT 4" in lab.wait_output(2, "SENT 4")

    # --yes prints the warning before submitting
    lab.run_cell(3)
    out = lab.wait_output(3, "submitted sft job")
    assert f"warning: sft.toml: {TYPO}" in out
    assert not any(c in page.content() for c in CANARIES)


def test_backend_first_keys_in_plain_words_and_unconfirmed_pastes(lab: Any) -> None:
    project(lab, env=f"ENVIRONMENT_API_KEY={CANARY_ENV}\n")  # no SYNTH_API_KEY: only the hosted backend needs one
    lab.write_notebook("keys.ipynb", [
        setup_cell(), "%synth_train",
        "import pathlib, time\nwhile not pathlib.Path('go').exists():\n    time.sleep(0.1)\nprint('UNBLOCKED')",
    ])
    lab.open("keys.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    page = lab.page
    wizard = page.locator(".synth-wizard")
    wizard.wait_for()
    tick(lab, "gepa.toml")
    # step 1 asks where the jobs run, before the keys (the default is the hosted backend)
    backend = wizard.locator("[data-testid=override-backend]")
    assert backend.is_visible() and backend.input_value() == ""
    assert "agent-learning.onrender.com" in wizard.locator("[data-testid=backend-now]").inner_text()
    wizard_at(lab, "secrets")
    assert wizard.locator("[data-testid=secret-SYNTH_API_KEY]").inner_text() == "missing"  # right for hosted
    set_backend(lab, "local")
    page.wait_for_function("() => (document.querySelector('[data-testid=backend-now]') || {}).textContent"
                           "?.includes('embedded local backend')")
    wizard_at(lab, "secrets")
    synth = wizard.locator("[data-testid=secret-SYNTH_API_KEY]")
    assert re.fullmatch(r"provided by the embedded local backend \(••••\S{4}\)", synth.inner_text())
    env_key = wizard.locator("[data-testid=secret-ENVIRONMENT_API_KEY]")
    assert env_key.inner_text() == f"found in .env (••••{CANARY_ENV[-4:]})"  # the file's path, not ".env:.env"
    assert "env:" not in wizard.inner_text()
    select = wizard.locator("[data-key=env-file]")
    assert wizard.locator("label[for]", has_text="Read keys from").count() == 1
    assert select.locator("option").all_inner_texts() == ["automatic", "the file .env"]
    lab.screenshot("keys-plain-words", wizard)

    # a pasted key while the kernel is busy: "sending…", then "not confirmed", then accepted once it answers
    lab.run_cell(2, wait=False)
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'busy'")
    live = wizard.locator("[data-testid=wizard-live]")
    field = wizard.get_by_label("Paste ENVIRONMENT_API_KEY")
    field.fill(CANARY_PASTED)
    wizard.get_by_role("button", name="Use pasted ENVIRONMENT_API_KEY").click()
    assert field.input_value() == ""
    page.wait_for_function("() => document.querySelector('[data-testid=secret-ENVIRONMENT_API_KEY]').textContent"
                           ".includes('has not confirmed')", timeout=60_000)
    assert "busy or stopped" in env_key.inner_text()
    wait_live(page, live, "The kernel has not confirmed ENVIRONMENT_API_KEY yet.")
    lab.screenshot("paste-unconfirmed", wizard)
    (lab.folder / "go").write_text("")
    lab.wait_output(2, "UNBLOCKED")
    page.wait_for_function("() => document.querySelector('[data-testid=secret-ENVIRONMENT_API_KEY]').textContent"
                           ".startsWith('pasted into the wizard')", timeout=60_000)
    assert env_key.inner_text() == f"pasted into the wizard (••••{CANARY_PASTED[-4:]})"
    wait_live(page, live, f"ENVIRONMENT_API_KEY accepted: pasted into the wizard (••••{CANARY_PASTED[-4:]}).")
    flush(page)
    assert not any(c in page.content() for c in CANARIES)


def test_monitor_refreshes_under_the_wizard_keep_focus_on_cancel(lab: Any) -> None:
    project(lab)
    lab.write_notebook("focus.ipynb", [setup_cell(speed=0.25), "%synth_train --backend local"])
    lab.open("focus.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    page = lab.page
    lab.page.locator(".synth-wizard").wait_for()
    tick(lab, "gepa.toml")
    wizard = wizard_at(lab, "submit")
    submit = wizard.locator("button.synth-submit[aria-disabled=false]")
    submit.wait_for(timeout=30_000)
    submit.click()
    cell = lab.cell(1)
    cell.locator(".synth-monitor[data-status='running']").wait_for(timeout=60_000)
    region = cell.locator(".synth-live-region")
    region.evaluate("el => { el.__synthProbe = 'kept'; }")
    cancel = cell.locator(".synth-controls button.synth-cancel")
    cancel.focus()
    for _ in range(2):  # two refreshes of the status output, each replacing it by display id
        before = cell.locator(".synth-progress-label").inner_text()
        page.wait_for_function("t => document.querySelector('.synth-progress-label').textContent !== t", arg=before,
                               timeout=60_000)
    assert page.evaluate("() => document.activeElement.classList.contains('synth-cancel')")
    assert region.evaluate("el => el.__synthProbe") == "kept", "the monitor's live region was replaced"
    assert cell.locator(".synth-monitor").count() == 1
    lab.screenshot("focus-kept-on-cancel", cell)
