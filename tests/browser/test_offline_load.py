"""The widgets load with the network blocked, in JupyterLab and in Notebook 7: every request the page makes
to anything but the local Jupyter server is aborted (and recorded), and the wizard and a monitor panel's
row (anywidget front ends, from ``synth_nb/static``) still draw and answer, with no script error.

The file half (no bundle names a remote URL) is ``tests/notebook/test_static_offline.py``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from .test_wizard_journeys import project, setup_cell

pytestmark = pytest.mark.browser

LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}


def _block_the_network(lab: Any) -> list[str]:
    """Abort every request of the page's context that is not for this machine; the aborted URLs, as they come."""
    blocked: list[str] = []

    def route(request_route: Any) -> None:
        url = request_route.request.url
        scheme, host = urlsplit(url).scheme, urlsplit(url).hostname or ""
        if scheme in ("data", "blob") or host in LOCAL_HOSTS:
            request_route.continue_()
        else:
            blocked.append(url)
            request_route.abort("internetdisconnected")

    lab.page.context.route("**/*", route)
    return blocked


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_the_wizard_and_a_panel_load_with_the_network_blocked(lab: Any, front_end: str) -> None:
    blocked = _block_the_network(lab)
    project(lab)
    lab.write_notebook("offline.ipynb", [setup_cell(speed=5), "%synth_train --backend local",
                                         "gepa = %synth_train -c gepa.toml --backend local --yes"])
    (lab.open if front_end == "jupyterlab" else lab.open_notebook7)("offline.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    wizard = lab.cell(1).locator(".synth-wizard")
    wizard.wait_for(timeout=60_000)
    # the wizard's script runs: it drew its steps and answers a click (Preview shows the masked payload)
    wizard.locator("[data-testid=step-preview]").click()
    lab.page.wait_for_function(
        "() => document.querySelector('.synth-wizard [aria-current=step]')?.dataset.step === 'preview'")
    lab.run_cell(2, wait=False)
    row = lab.cell(2)
    row.locator(".synth-monitor").first.wait_for(timeout=120_000)
    row.locator("button.synth-cancel").wait_for(timeout=120_000)  # the row's buttons: monitor.js
    row.locator(".synth-live-region").first.wait_for(state="attached", timeout=120_000)  # live_region.js
    row.locator(".synth-monitor[data-status='succeeded']").wait_for(timeout=300_000)
    lab.wait_idle(120)
    lab.screenshot(f"{front_end}-offline", lab.page.locator(".jp-Notebook").first)
    lab.assert_clean(where=f"{front_end}, network blocked")
    assert blocked == [], f"requests that left the machine: {blocked}"
