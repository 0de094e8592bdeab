"""The wizard checks a step when the user leaves it, as a form checks a field: nothing is "in error" before
anything was done. Walked in real JupyterLab and Notebook 7 (headless Chromium).

On open no step carries a problem badge; Next from step 1 with no config ticked flags step 1 and says why as
step 2 opens; the Secrets step then says that no valid config is selected (not "No keys needed."), also with
only an invalid config ticked, and lists the keys once a valid one is.
"""

from __future__ import annotations

from typing import Any

import pytest

from .a11y_support import wait_live
from .test_wizard_journeys import open_wizard, project, wizard_at

pytestmark = pytest.mark.browser

NO_VALID = "No valid config is selected (step 1): the keys its jobs need are listed here once one is."


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_steps_are_checked_on_next_and_secrets_says_no_valid_config(lab: Any, front_end: str) -> None:
    project(lab)
    _, wizard = open_wizard(lab, "validate.ipynb", front_end)
    page = lab.page

    # nothing touched: no step is in error (two valid configs, none ticked yet)
    assert wizard.locator(".synth-step-problems").count() == 0
    assert wizard.locator("[role=alert]").count() == 0
    assert wizard.locator("[data-testid=step-configs]").inner_text().strip() == "1. Configs"
    lab.screenshot(f"{front_end}-opened", wizard)

    # Next checks step 1: it is flagged, and the problem is said as step 2 opens
    wizard.get_by_role("button", name="Next").click()
    wait_live(page, wizard.locator("[data-testid=wizard-live]"),
              "Step 1 (Configs) has 1 problem: Select at least one config. Step 2 of 5: Secrets.")
    badge = wizard.locator("[data-testid=step-configs] .synth-step-problems")
    assert badge.inner_text() == "⚠ 1"
    assert wizard.locator("[data-testid=no-keys]").inner_text() == NO_VALID
    lab.screenshot(f"{front_end}-secrets-no-valid-config", wizard)

    # an invalid config ticked: still no valid one, still said so
    wizard_at(lab, "configs").locator("[data-testid='config-broken.toml']").check()
    page.wait_for_function("() => (document.querySelector('.synth-wizard [data-testid=step-configs]').title || '')"
                           ".startsWith('broken.toml: ')")
    wizard_at(lab, "secrets")
    assert wizard.locator("[data-testid=no-keys]").inner_text() == NO_VALID

    # a valid one: the keys its job needs, no "no keys" line
    wizard_at(lab, "configs").locator("[data-testid='config-gepa.toml']").check()
    wizard_at(lab, "secrets")
    wizard.locator("[data-testid=secret-ENVIRONMENT_API_KEY]").wait_for()
    assert wizard.locator("[data-testid=no-keys]").count() == 0
    lab.assert_clean(lab.cell(1), f"wizard in {front_end}")
