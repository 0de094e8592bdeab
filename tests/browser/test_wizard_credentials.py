"""Credentials typed into the wizard stay in the kernel: the page, the saved notebook and the static copy left
when the kernel goes show them masked. Walked in real JupyterLab and Notebook 7 (headless Chromium).

A backend URL with ``user:password@`` and a task app URL with a key in it are committed (the kernel keeps them,
the fields show ``http://••••@…``), a key-shaped idempotency key too; then a URL with a password is typed into
the backend field and left uncommitted, the focus still in it, when the kernel shuts down. The notebook saved
after the wizard became a static copy holds none of them.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from .test_wizard_journeys import CANARIES, open_wizard, project, tick, wizard_at

pytestmark = pytest.mark.browser

PASSWORD, URL_KEY, KEY_SHAPED, TYPED = ("PWcanary0b9e", "KEYcanary5d1f", "sk-canary-IDEM-a8c2e4f6b1d3", "TYPEDcanary77")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _commit(field: Any, value: str) -> None:
    field.fill(value)
    field.press("Enter")


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_credentials_typed_into_the_wizard_never_reach_the_page_or_the_saved_notebook(lab: Any, front_end: str) -> None:
    project(lab)
    path, wizard = open_wizard(lab, "creds.ipynb", front_end)
    page = lab.page
    tick(lab, "gepa.toml")
    url = re.search(r"http://127\.0\.0\.1:\d+/api", wizard.locator("[data-testid=backend-now]").inner_text()).group(0)  # type: ignore[union-attr]

    backend = wizard.locator("[data-testid=override-backend]")
    _commit(backend, url.replace("http://", f"http://admin:{PASSWORD}@"))
    wizard_at(lab, "overrides")
    task_url = wizard.locator("[data-testid=override-task_url]")
    # the fields are prefilled from the ticked config: typed before the kernel's prefill arrives, an edit is
    # overwritten by it (the kernel's update of the whole form comes after the local change)
    page.wait_for_function("() => document.querySelector('[data-testid=override-task_url]').value !== ''")
    _commit(task_url, f"http://u:{URL_KEY}@127.0.0.1:8111")
    assert task_url.input_value() == "http://••••@127.0.0.1:8111"  # masked as soon as it is committed
    _commit(wizard.locator("[data-testid=override-idempotency]"), KEY_SHAPED)
    wizard_at(lab, "configs")
    page.wait_for_function("() => document.querySelector('[data-testid=override-backend]').value.includes('••••@')")
    assert backend.input_value() == url.replace("http://", "http://••••@")
    wizard_at(lab, "overrides")
    assert wizard.locator("[data-testid=override-task_url]").input_value() == "http://••••@127.0.0.1:8111"
    assert wizard.locator("[data-testid=override-idempotency]").input_value() == "••••" + KEY_SHAPED[-4:]
    wizard_at(lab, "preview")
    page.wait_for_function("() => document.querySelector(\"[data-testid='preview-gepa.toml']\")?.textContent"
                           ".includes('\"task_app_url\": \"http://••••@127.0.0.1:8111\"')")
    content = page.content()
    assert not any(c in content for c in (PASSWORD, URL_KEY, KEY_SHAPED, *CANARIES))
    lab.screenshot(f"{front_end}-masked-preview", wizard)

    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 30
    while WIDGET_VIEW not in path.read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    saved = path.read_text()
    assert WIDGET_VIEW in saved and not any(c in saved for c in (PASSWORD, URL_KEY, KEY_SHAPED, *CANARIES))

    # typed but not committed, the focus still in the field, when the kernel shuts down: the copy masks it
    wizard_at(lab, "configs")
    backend.fill(f"http://admin:{TYPED}@127.0.0.1:1/api")
    assert page.evaluate("() => document.activeElement.dataset.testid") == "override-backend"
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:shutdown-kernel')")
    # the view's copy, saved, then (the notebook stays open) the kernel's own snapshot in its place
    lab.cell(1).locator(".synth-frozen, .synth-wizard-snapshot").first.wait_for(timeout=60_000)
    deadline = time.monotonic() + 30
    while WIDGET_VIEW in path.read_text() and time.monotonic() < deadline:  # saved once the copy is in place
        time.sleep(0.2)
    saved = path.read_text()
    assert WIDGET_VIEW not in saved
    outputs = json.loads(saved)["cells"][1]["outputs"]
    assert "http://••••@127.0.0.1:1/api" in json.dumps(outputs, ensure_ascii=False)
    for text in (saved, page.content()):
        assert not any(c in text for c in (PASSWORD, URL_KEY, KEY_SHAPED, TYPED, *CANARIES))
    lab.screenshot(f"{front_end}-static-copy", lab.cell(1))
    lab.assert_clean(lab.cell(1), f"the wizard's copy in {front_end}")
