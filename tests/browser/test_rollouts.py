"""The rollouts of a real RL job in a real JupyterLab: the table renders, a row opens by keyboard (Tab to its
summary, Enter), the filter bar narrows the rows, no key reaches the notebook, no script error.

The job is a real GRPO run on the embedded backend (the bundled charclass task app, the tiny model), started
by the test and submitted from the kernel through the pipeline, as a user's ``%synth_train`` would.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from minimal_configs import TINY_RL

from .a11y_support import flush, notebook_shape

pytestmark = [pytest.mark.browser, pytest.mark.torch]

TASK_APP_KEY = "sk_env_rollouts_" + "r" * 20

SETUP = """\
import json
from pathlib import Path
from synth_nb import pipeline
from synth_nb.pipeline import SecretSources, Target

found = json.loads(Path("backend.json").read_text())
target = Target(found["url"], found["key"])
sources = SecretSources(environ={"ENVIRONMENT_API_KEY": found["task_key"]}, cwd=Path.cwd())
prepared = pipeline.prepare_config(Path("rl.toml"), overrides=pipeline.build_overrides({"task_url": found["task_url"]}, target),
                                   target=target, sources=sources)
job = await pipeline.submit_plan(prepared.plan, target, found["key"], poll_interval=0.5)
print("job", await job.wait(600))
"""


def test_the_rollout_table_renders_and_a_row_opens_by_keyboard(lab: Any) -> None:
    from synth_nb.backend import normalize_backend_url
    from synth_nb.local import start_backend
    from synth_nb.local.examples import start_task_app

    with start_task_app("charclass", api_key=TASK_APP_KEY) as app, \
            start_backend(environment_api_key=TASK_APP_KEY) as backend:
        (lab.folder / "backend.json").write_text(json.dumps({
            "url": normalize_backend_url(backend.url), "key": backend.api_key, "task_url": app.url,
            "task_key": TASK_APP_KEY}))
        (lab.folder / "rl.toml").write_text(TINY_RL.format(task_url=app.url))
        lab.write_notebook("rollouts.ipynb", [SETUP, "job.rollouts()"])
        lab.open("rollouts.ipynb")
        lab.run_cell(0, timeout=600)
        lab.wait_output(0, "job succeeded", 60)
        lab.run_cell(1)
        view = lab.cell(1).locator(".synth-samples")
        view.wait_for()
        lab.assert_clean(where="rollouts drawn")
        page = lab.page
        assert "12 sampled, steps 0–2" in view.locator("h3").inner_text()
        assert view.locator("h4", has_text="Best of step 2 (by reward)").count() == 1
        rows = view.locator("table.all tr.s")
        assert rows.count() == 12

        first = view.locator("table.all details").first
        summary = first.locator("summary")
        summary.focus()
        shape = notebook_shape(page)
        page.keyboard.press("Enter")
        first.locator("pre").first.wait_for(state="visible", timeout=10_000)
        assert first.get_attribute("open") is not None and "user: " in first.inner_text()
        page.keyboard.press("Enter")  # and closes again
        page.wait_for_function("(el) => !el.open", arg=first.element_handle())

        step = view.locator(".bar input[name='step']")  # the filter bar: shown where the output's script runs
        step.wait_for(state="visible", timeout=10_000)
        step.focus()
        for key in "2":
            page.keyboard.press(key)
        page.keyboard.press("Tab")  # leaves the field; the rows are filtered as typed
        visible = view.locator("table.all tr.s:not([hidden])")
        page.wait_for_function("() => document.querySelectorAll('.synth-samples table.all tr.s:not([hidden])').length"
                               " === 6")  # step 2: its first group (4) and its evaluation (2)
        assert all(visible.nth(i).get_attribute("data-step") == "2" for i in range(visible.count()))
        flush(page)
        assert notebook_shape(page) == shape, "a key typed in the rollout view reached the notebook"
        rows.nth(3).click()  # a click on a row opens it too
        view.locator("table.all details").nth(3).locator("pre").first.wait_for(state="visible", timeout=10_000)
        lab.screenshot("rollouts-opened", view)
        lab.assert_clean(where="rollouts opened and filtered")
        lab.save()
        saved = json.loads((lab.folder / "rollouts.ipynb").read_text())
        html = "".join("".join(o["data"]["text/html"]) for c in saved["cells"] for o in c.get("outputs", [])
                       if "text/html" in o.get("data", {}))
        assert "synth-samples" in html and html.count("<details>") >= 12  # the saved notebook keeps a static copy
        assert backend.api_key not in json.dumps(saved) and TASK_APP_KEY not in json.dumps(saved)
