"""The embedded backend outlives the kernel: a job started before a kernel restart is attached after it.

Walked in real JupyterLab (headless Chromium): submit with ``--backend local``, restart the kernel while
the job runs, type ``%synth_train --attach ID`` in the new kernel, and the panel shows the job's whole
history and follows it to the end; save → close → reopen keeps the outputs, and the widgets the old kernel
left (the running job's buttons, the wizard) reopen as the static copies they became, with no widget error.
A websocket that drops and comes back to the same kernel changes nothing. The backend process is the
data folder's shared one (it replays a bundled recording slowly, so the restart lands mid-job) and is
stopped by pid when the test ends.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest

pytestmark = pytest.mark.browser

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minimal_configs import MINIMAL_SFT  # noqa: E402

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
LINE = '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n'


@pytest.fixture
def backend(lab: Any) -> Iterator[Any]:
    from synth_nb.local.shared import ensure_backend, stop_backend

    folder = lab.folder / ".synth_nb" / "backend"
    # ~60 s per job: long enough for a kernel restart in the middle
    running = ensure_backend(folder, options=("--default-executor", "replay", "--replay-speed", "0.4"))
    try:
        yield running
    finally:
        stop_backend(folder)


def _status(lab: Any, index: int, status: str, timeout: float) -> Any:
    monitor = lab.cell(index).locator(f".synth-monitor[data-status='{status}']")
    monitor.first.wait_for(timeout=timeout * 1000)
    return monitor.first


def _set_source(lab: Any, index: int, source: str) -> None:
    """Type a cell, as a person would (through the notebook model, not the file)."""
    lab.page.evaluate("""([i, text]) => {
        const panel = window.jupyterapp.shell.currentWidget;
        panel.content.widgets[i].model.sharedModel.setSource(text);
    }""", [index, source])


def _restart_kernel(lab: Any) -> None:
    # the command's promise resolves only once the dialog is answered: do not wait for it in the page
    lab.page.evaluate("() => { window.jupyterapp.commands.execute('kernelmenu:restart'); }")
    lab.page.locator(".jp-Dialog-button.jp-mod-accept").click()
    time.sleep(1.0)
    lab.wait_idle()


def _buttons_are_off(lab: Any, cell: Any) -> None:
    """Disabled, not dimmed: no button of the row takes the focus, so Enter cannot press it."""
    buttons = cell.locator(".synth-controls button:visible")
    assert buttons.count() >= 2
    for k in range(buttons.count()):
        button = buttons.nth(k)
        assert button.is_disabled(), button.inner_text()
        button.evaluate("b => b.focus()")
        assert not button.evaluate("b => b === document.activeElement"), button.inner_text()


def _row_is_text(cell: Any, job_id: str) -> str:
    """The button row became static text (no button left to focus or press); what it says."""
    row = cell.locator(f".synth-controls-snapshot[data-job-id='{job_id}']")
    row.wait_for(timeout=60_000)
    assert cell.locator(".synth-controls").count() == 0 and cell.locator("button").count() == 0
    return str(row.inner_text())


def _reconnect(lab: Any) -> None:
    """Drop the kernel's websocket and connect again to the same kernel (a network blip, not a restart)."""
    lab.page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.reconnect()")
    lab.wait_idle()


def _row_is_live(cell: Any) -> None:
    """The job's button row is still the widget: Cancel can be pressed, nothing says the kernel is gone."""
    cell.locator(".synth-controls button.synth-cancel:not([disabled])").wait_for(timeout=60_000)
    assert cell.locator(".synth-gone").count() == 0 and cell.locator(".synth-frozen").count() == 0


def _live_widgets(path: Path, index: int) -> list[str]:
    """Model ids of the widget outputs a saved cell still refers to (none: it reopens without a kernel)."""
    outputs = json.loads(path.read_text())["cells"][index]["outputs"]
    return [o["data"][WIDGET_VIEW].get("model_id") for o in outputs
            if WIDGET_VIEW in o.get("data", {}) and o["data"][WIDGET_VIEW].get("model_id")]


def _saved_status(path: Path, index: int) -> str:
    """The saved status output of a panel (its HTML and its text) in cell ``index``."""
    outputs = json.loads(path.read_text())["cells"][index]["outputs"]
    parts = ["".join(o["data"].get("text/html", "")) + "\n" + "".join(o["data"].get("text/plain", ""))
             for o in outputs if "synth-monitor" in "".join(o.get("data", {}).get("text/html", ""))]
    assert len(parts) == 1, parts
    return parts[0]


def _backend_metric_count(backend: Any, job_id: str) -> int:
    answer = httpx.get(f"{backend.url}/api/learning/jobs/{job_id}/metrics", params={"limit": 10000},
                       headers={"Authorization": f"Bearer {backend.api_key}"}, timeout=30, trust_env=False)
    body = answer.json()
    points = body.get("points", body.get("metrics", [])) if isinstance(body, dict) else body
    return len({(p["name"], p["step"]) for p in points})


def test_a_job_survives_a_kernel_restart_and_is_attached_with_its_whole_history(lab: Any, backend: Any) -> None:
    (lab.folder / "sft.toml").write_text(MINIMAL_SFT)
    (lab.folder / "train.jsonl").write_text(LINE * 4)
    setup = (f"%env SYNTH_NB_BACKEND_DIR={lab.folder / '.synth_nb' / 'backend'}\n"
             "%load_ext synth_nb\nfrom pathlib import Path")
    lab.write_notebook("restart.ipynb", [
        setup,
        "job = %synth_train -c sft.toml --backend local --yes\n_ = Path('job_id.txt').write_text(job.id)",
        "# the job id goes here after the restart",
        "await job.wait()\nprint('history:', len(job.metrics), 'metric points, status', job.status)",
        "%synth_train --backend local",
    ])
    lab.open("restart.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    lab.wait_output(1, f"embedded backend on {backend.url}", 60)  # found, not started: said once, with the folder
    job_id = (lab.folder / "job_id.txt").read_text()
    _status(lab, 1, "running", 60)
    lab.cell(1).locator("img").first.wait_for(timeout=60_000)  # some history is in before the restart
    lab.screenshot("before-restart", lab.cell(1))
    lab.run_cell(4)
    lab.cell(4).locator(".synth-wizard").wait_for()
    _reconnect(lab)  # the same kernel comes back: its widgets stay live
    _row_is_live(lab.cell(1))
    assert lab.cell(4).locator(".synth-wizard .synth-gone").count() == 0

    _restart_kernel(lab)
    # the old panel says in words that its kernel is gone and how to re-attach; its buttons are disabled.
    # (JupyterLab drops what the kernel sends once a restart is asked for, so the row's snapshot never
    # arrives: the front end says it, from the widgets' own script)
    old = lab.cell(1)
    notice = old.locator(".synth-live-region.synth-gone")
    notice.wait_for(timeout=60_000)
    said = notice.inner_text()
    assert "kernel that followed job" in said and f"--attach {job_id}" in said
    _buttons_are_off(lab, old)
    header = old.locator(".synth-status-line").inner_text()
    assert "ETA" not in header and "unknown (last seen running)" in header, header
    wizard = lab.cell(4).locator(".synth-wizard")
    assert "kernel that ran this wizard is gone" in wizard.locator("[data-testid=wizard-kernel-gone]").inner_text()
    assert wizard.locator(".synth-content").evaluate("el => el.inert")
    lab.screenshot("old-panel-after-restart", old)
    lab.assert_clean(old, "the old panel after the restart")
    # what they show stays, as static copies: a notebook saved now refers to no model of the old kernel
    old.locator(".synth-frozen .synth-live-region.synth-gone").wait_for(timeout=60_000)
    wizard.locator("xpath=ancestor::div[contains(@class, 'synth-frozen')]").wait_for(timeout=60_000)
    path = lab.folder / "restart.ipynb"
    lab.save()
    assert _live_widgets(path, 1) == [] and _live_widgets(path, 4) == []
    saved_old = json.dumps(json.loads(path.read_text())["cells"][1]["outputs"])
    assert f"--attach {job_id}" in saved_old and "synth-frozen" in saved_old
    texts = ["".join(o["data"].get("text/plain", "")) for o in json.loads(path.read_text())["cells"][1]["outputs"]
             if "synth-frozen" in "".join(o.get("data", {}).get("text/html", ""))]
    assert len(texts) == 1 and f"--attach {job_id}" in texts[0] and "Cancel job" in texts[0], texts
    status = _saved_status(path, 1)  # the status line is saved as the page shows it: no live status, no ETA
    assert "unknown (last seen running)" in status and "status=unknown (last seen running)" in status
    assert "ETA" not in status
    lab.run_cell(0)
    _set_source(lab, 2, f"job = %synth_train --attach {job_id}")
    lab.run_cell(2)
    monitor = _status(lab, 2, "running", 60)  # still running: the backend did not die with the kernel
    assert monitor.get_attribute("data-job-id") == job_id
    lab.screenshot("attached-mid-job", lab.cell(2))
    _status(lab, 2, "succeeded", 240)
    lab.run_cell(3, timeout=120)
    expected = _backend_metric_count(backend, job_id)
    assert expected > 50
    lab.wait_output(3, f"history: {expected} metric points, status succeeded", 60)
    lab.cell(2).locator("img").first.wait_for(timeout=60_000)
    lab.screenshot("attached-finished", lab.cell(2))
    # a job that had ended loses nothing with its kernel: no notice, its status stays; its buttons are off
    _restart_kernel(lab)
    ended = lab.cell(2)
    said = _row_is_text(ended, job_id)  # text since the job ended: nothing was left to press
    assert said.startswith(f"Job {job_id} succeeded: ") and "kernel" not in said  # status and why it stopped
    assert ended.locator(".synth-monitor[data-status='succeeded'] .synth-status").inner_text() == "succeeded"

    lab.save()
    saved = nbformat.read(path, as_version=4)
    assert job_id in saved.cells[2].source
    assert any("image/png" in o.get("data", {}) or "data:image/png" in str(o.get("data", {}))
               for o in saved.cells[2].outputs)
    assert backend.api_key not in path.read_text()

    lab.shutdown_kernels()
    lab.page.goto("about:blank")
    lab.open("restart.ipynb")
    cell = lab.cell(2)
    cell.locator("img").first.wait_for(timeout=60_000)
    shown = cell.locator(".jp-OutputArea").inner_text()
    assert job_id in shown and "succeeded" in shown
    lab.screenshot("reopened", cell)
    assert "Error displaying widget" not in shown  # the ended job's row left text
    # the first kernel's running job and wizard left their static copies: what they said, no widget error
    first = lab.cell(1).locator(".synth-frozen")
    first.wait_for(timeout=60_000)
    assert f"--attach {job_id}" in first.inner_text()
    assert lab.cell(1).locator(".synth-frozen button").count() >= 2
    assert lab.cell(1).locator(".synth-frozen button:not([disabled])").count() == 0
    assert "kernel that ran this wizard is gone" in lab.cell(4).locator(".synth-frozen").inner_text()
    assert "unknown (last seen running)" in lab.cell(1).locator(".synth-status-line").inner_text()
    lab.screenshot("reopened-old-widgets", lab.cell(1))
    lab.assert_clean(where="reopened without a kernel")


def test_widgets_of_a_crashed_kernel_reopen_as_static_copies_in_notebook7(lab: Any, backend: Any) -> None:
    """The kernel dies mid-job (it restarts on its own): the running job's row and the wizard become static
    copies that say so, and the notebook saved then reopens in Notebook 7 with no widget error."""
    (lab.folder / "sft.toml").write_text(MINIMAL_SFT)
    (lab.folder / "train.jsonl").write_text(LINE * 4)
    path = lab.write_notebook("crash.ipynb", [
        f"%env SYNTH_NB_BACKEND_DIR={lab.folder / '.synth_nb' / 'backend'}\n%load_ext synth_nb",
        "job = %synth_train -c sft.toml --backend local --yes",
        "%synth_train --backend local",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
    ])
    lab.open_notebook7("crash.ipynb")
    lab.run_cell(0)
    lab.run_cell(1)
    _status(lab, 1, "running", 60)
    lab.run_cell(2)
    lab.cell(2).locator(".synth-wizard").wait_for()

    lab.run_cell(3, wait=False)
    lab.page.locator(".jp-Dialog-button.jp-mod-accept").click()  # "the kernel appears to have died"
    row = lab.cell(1).locator(".synth-frozen")
    row.locator(".synth-live-region.synth-gone").wait_for(timeout=60_000)
    assert "--attach" in row.inner_text()
    _buttons_are_off(lab, lab.cell(1))
    wizard = lab.cell(2).locator(".synth-frozen")
    wizard.locator("[data-testid=wizard-kernel-gone]").wait_for(timeout=60_000)
    lab.screenshot("notebook7-after-crash", lab.cell(2))
    lab.wait_idle()
    lab.save()
    assert _live_widgets(path, 1) == [] and _live_widgets(path, 2) == []

    lab.shutdown_kernels()
    lab.page.goto("about:blank")
    lab.open_notebook7("crash.ipynb")
    lab.cell(1).locator(".synth-frozen .synth-gone").wait_for(timeout=60_000)
    assert "kernel that ran this wizard is gone" in lab.cell(2).locator(".synth-frozen").inner_text()
    lab.screenshot("notebook7-reopened-row", lab.cell(1))
    lab.screenshot("notebook7-reopened-wizard", lab.cell(2))
    lab.assert_clean(where="reopened in Notebook 7 after the kernel died")
