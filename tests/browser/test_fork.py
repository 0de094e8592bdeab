"""Forking a finished job in real JupyterLab: the wizard prefilled from its bundle, the pre-flight card and
the diff against the parent on the Preview step, then a submission.

The parent runs on an embedded backend that replays bundled recordings; its config points at the example
banking task app that backend serves, so the pre-flight card's dry rollout is real. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .a11y_support import wait_live

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minimal_configs import LOCAL_GEPA  # noqa: E402

SETUP = (
    "%load_ext synth_nb\n"
    "from synth_nb.local import start_backend\n"
    "from synth_nb.pipeline import use_local_backend, example_task_app_url\n"
    "from synth_nb.notebook.wizard import Wizard\n"
    "use_local_backend(start_backend(default_executor='replay', executor_options={'replay': {'speed': 20}}))\n"
    f"open('gepa.toml', 'w').write({LOCAL_GEPA!r}.format(task_url=example_task_app_url('banking'), budget=24))\n"
    "open('.env', 'w').write('SYNTH_SKIP_TASK_APP_HEALTH_CHECK=1\\n')"
)
CELLS = [
    SETUP,
    "parent = %synth_train --config gepa.toml --backend local --yes --wait\nprint('PARENT', parent.id, parent.status)",
    "%synth_train --fork {parent.id}",
    "print('CHILD', __import__('json').dumps([j.id for j in Wizard.latest.jobs]))",
]
NEW_TASK_URL = "http://127.0.0.1:8111"


@pytest.mark.browser
def test_fork_a_finished_job_change_an_override_see_the_diff_and_submit(lab) -> None:  # type: ignore[no-untyped-def]
    lab.write_notebook("fork.ipynb", CELLS)
    lab.open("fork.ipynb")
    lab.run_cell(0)
    lab.run_cell(1, timeout=180)
    parent, status = lab.wait_output(1, "PARENT").split("PARENT", 1)[1].split()[:2]
    assert status == "succeeded"
    lab.run_cell(2)
    page = lab.page
    wizard = lab.cell(2).locator(".synth-wizard")
    wizard.wait_for()
    assert wizard.locator(".synth-title").inner_text() == f"Fork job {parent}"
    assert wizard.locator("[data-testid='config-gepa.toml']").is_checked()

    # Preview: the same plan as the parent's, and the pre-flight card of it (no job sent)
    wizard.locator("[data-testid=step-preview]").click()
    diff = wizard.locator("[data-testid='diff-gepa.toml']")
    assert diff.locator("summary").inner_text() == f"Same as the parent job {parent}"
    wizard.locator("[data-testid=preflight-run]").click()
    card = wizard.locator("[data-testid='card-gepa.toml']")
    card.wait_for(timeout=120_000)
    assert "pre-flight check: gepa.toml [prompt_learning/gepa]" in card.inner_text()
    assert "dry rollout" in card.inner_text() and "estimate" in card.inner_text()
    assert "ready (no job was sent)" in card.inner_text() and "not ready" not in card.inner_text(), card.inner_text()
    # the live region says what the card says (not "no card" while the card is on screen)
    wait_live(page, wizard.locator("[data-testid=wizard-live]"),
              "Pre-flight check done (nothing was sent): gepa.toml ready.")
    lab.assert_clean(lab.cell(2), "the pre-flight card")
    lab.screenshot("fork-preflight-card", wizard)

    # Overrides: one change; the Preview then shows it against the parent and the stale card is gone
    wizard.locator("[data-testid=step-overrides]").click()
    task_url = wizard.locator("[data-testid=override-task_url]")
    assert "/task-apps/banking" in task_url.input_value()
    task_url.fill(NEW_TASK_URL)
    task_url.press("Enter")
    wizard.locator("[data-testid=step-preview]").click()
    page.wait_for_function(
        "() => (document.querySelector(\"[data-testid='diff-gepa.toml'] summary\") || {}).textContent"
        "?.startsWith('Changes since the parent job')")
    assert diff.get_attribute("open") is not None  # a fork's diff opens unfolded
    lines = diff.locator("pre").inner_text().splitlines()
    assert any(line.startswith("-") and "/task-apps/banking" in line for line in lines)
    assert any(line.startswith("+") and NEW_TASK_URL in line for line in lines)
    assert wizard.locator("[data-testid='card-gepa.toml']").count() == 0
    lab.screenshot("fork-diff", wizard)

    # Submit: a new job, followed by its monitor panel under the wizard
    submit = wizard.locator("[data-testid=step-submit]")
    submit.click()
    page.wait_for_function(
        "() => document.querySelector('.synth-wizard button.synth-submit')?.getAttribute('aria-disabled') === 'false'",
        timeout=15_000)
    wizard.locator("button.synth-submit").click()
    [child] = lab.submitted_ids(2)
    assert child != parent
    lab.cell(2).locator(".synth-monitor[data-status='succeeded']").wait_for(timeout=120_000)
    lab.run_cell(3)
    assert json.loads(lab.wait_output(3, "CHILD").split("CHILD", 1)[1].strip().splitlines()[0]) == [child]
    lab.save()
    saved = (lab.folder / "fork.ipynb").read_text()
    assert child in saved
    run = json.loads((lab.folder / "results" / child / "run.json").read_text())  # the child's bundle
    assert run["forked_from"] == parent and run["parent"] is None
    lab.assert_clean(lab.cell(2), "the forked job's panel")
