"""The wizard in a real kernel (nbclient): canary keys never reach the saved notebook.

nbclient stores widget state in the file by default, which is exactly how a synced secret would leak.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from _wizard_support import CANARIES, CANARY_PASTED, CANARY_SYNTH, clean_environ, make_project
from nbclient import NotebookClient

CELLS = [
    "%env SYNTH_NB_WIDGETS=1\n%load_ext synth_nb",
    # a replaying local backend: the submitted jobs finish in seconds without any model
    "from synth_nb.local import start_backend\n"
    "from synth_nb.pipeline import use_local_backend\n"
    "use_local_backend(start_backend(default_executor='replay', executor_options={'replay': {'speed': 50}}))",
    "%synth_train -c gepa.toml --backend local",
    # ENVIRONMENT_API_KEY may be missing (it is pasted below) unless the embedded backend supplies one
    "w = _\nw.selected = ['gepa.toml', 'sft.toml']\nw.overrides = {**w.overrides, 'examples': '2'}\n"
    "print('BLOCKERS', [b for b in w.blockers if 'ENVIRONMENT_API_KEY' not in b])",
    # what the front end does when a key is pasted (the value comes from the kernel's environment here,
    # so the notebook source itself holds no secret)
    "import os\n"
    "w._handle_custom_msg({'type': 'paste_secret', 'name': 'ENVIRONMENT_API_KEY', 'value': os.environ['PASTE']}, [])\n"
    "print('CAN_SUBMIT', w.can_submit)",
    "w._handle_custom_msg({'type': 'submit'}, [])\njobs = await w.submit_task\n"
    "print('SUBMITTED', [s['job_id'] for s in w.submitted], w.submit_error)",
    "%env SYNTH_NB_WIDGETS=0\n%synth_train -c gepa.toml --backend local",
    "print(repr(w.secrets))",
    # --yes with a front end: returns at once with a Job bound to the kernel's loop, awaitable later
    "%env SYNTH_NB_WIDGETS=1\njob = %synth_train -c sft.toml --backend local --yes\nprint('RETURNED', job.done)",
    "print('WAITED', await job.wait())",
]


@pytest.mark.notebook
def test_saved_notebook_with_widget_state_holds_no_canary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_project(tmp_path / "nb")
    (folder / ".env").write_text(f"SYNTH_API_KEY={CANARY_SYNTH}\n")  # ENVIRONMENT_API_KEY gets pasted
    for name in set(__import__("os").environ) - set(clean_environ()):
        monkeypatch.delenv(name)
    monkeypatch.setenv("SYNTH_SKIP_TASK_APP_HEALTH_CHECK", "1")  # replayed jobs need no task app
    monkeypatch.setenv("PASTE", CANARY_PASTED)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in CELLS])
    client = NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    client.execute()
    path = folder / "wizard.ipynb"
    nbformat.write(nb, path)
    saved = path.read_text()

    outputs = ["".join(o.get("text", "") for o in cell.outputs) for cell in nb.cells]
    assert "BLOCKERS []" in outputs[3]
    assert "CAN_SUBMIT True" in outputs[4]
    assert "SUBMITTED ['" in outputs[5] and "SUBMITTED []" not in outputs[5]
    assert "Nothing was sent" in outputs[6] and "ENVIRONMENT_API_KEY" in outputs[6]
    assert "'source': 'pasted'" in outputs[7]
    assert "RETURNED False" in outputs[8]
    assert "WAITED succeeded" in outputs[9]

    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    wizard_states = [s["state"] for s in state.values() if s["state"].get("_anywidget_id", "").endswith("Wizard")]
    assert len(wizard_states) == 1
    assert wizard_states[0]["submitted"] and "••••" + CANARY_PASTED[-4:] in saved
    for canary in CANARIES:
        assert canary not in saved
