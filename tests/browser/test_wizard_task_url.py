"""The wizard's task URL field shows the URL the job will be sent with, in real JupyterLab (headless Chromium).

A GEPA config names a task app on a port where nothing listens; on the embedded backend the send uses the
bundled banking app that backend serves. The Overrides step shows that URL in the field, says so under it
("the bundled banking app on the embedded backend"), and the Preview's payload sends it: not the dead URL of
the TOML.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from .test_wizard_journeys import tick, wizard_at

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minimal_configs import LOCAL_GEPA  # noqa: E402

pytestmark = pytest.mark.browser

SETUP = ("%load_ext synth_nb\n"
         "from synth_nb.local import start_backend\n"
         "from synth_nb.pipeline import use_local_backend\n"
         "backend = start_backend()\n"
         "use_local_backend(backend)\n"
         "from synth_nb.pipeline import bundled_apps\n"
         "print('bundled at', bundled_apps.served_at('banking', backend.url + '/api'))")


def test_the_task_url_field_shows_the_bundled_app_the_send_will_use(lab: Any) -> None:
    (lab.folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url="http://127.0.0.1:9", budget=24))
    (lab.folder / "sft.toml").write_text("# not a training config\n")
    lab.write_notebook("task_url.ipynb", [SETUP, "%synth_train --backend local"])
    lab.open("task_url.ipynb")
    lab.run_cell(0)
    bundled = lab.wait_output(0, "bundled at").split("bundled at ", 1)[1].split()[0]
    lab.run_cell(1)
    lab.page.locator(".synth-wizard").wait_for()
    tick(lab, "gepa.toml")
    wizard = wizard_at(lab, "overrides")
    field = wizard.locator("[data-testid=override-task_url]")
    lab.page.wait_for_function("([el, url]) => el.value === url", arg=[field.element_handle(), bundled])
    hint = wizard.locator("[data-testid=override-error-task_url]").inner_text()
    assert hint == "Used: the bundled banking app on the embedded backend (the config's http://127.0.0.1:9 does not answer)"
    preview = wizard_at(lab, "preview").inner_text()
    assert bundled in preview and "127.0.0.1:9\"" not in preview
    lab.screenshot("wizard-task-url-used", wizard)
    lab.assert_clean(where="the wizard's task URL field")
