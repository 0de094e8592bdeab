"""Headless runs are quiet and useful: ``jupyter nbconvert --execute`` and ``papermill`` (no front end) run
an example notebook each (every example is run headless by nbclient, the executor both use, with the same
check in ``test_example_notebooks``), and the saved notebook's text output of the job (its cell's stream text and each
output's text copy) stays under 100 lines: no button row, a progress line at most each tenth of the work
or every 30 s, a final block, the summary's text copy cut short; papermill's log says the same as it runs.
A replayed 10,000-step job shows the rule at work: a line per tenth, not per update."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from test_example_notebooks import (
    EXAMPLES,
    MAX_JOB_LINES,
    _execute,
    _recording,
    assert_quiet_job_cell,
    check_progress,
    replay_panel_cell,
)

pytestmark = pytest.mark.notebook

RUN_SECONDS = 1200


def _environment(out: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # a forced Agg kills inline PNGs
    for key in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_API_KEY", "ENVIRONMENT_API_KEY",
                "SYNTH_NB_WIDGETS", "JPY_SESSION_NAME", "VSCODE_PID"):
        env.pop(key, None)
    env["SYNTH_NB_OUTPUT_DIR"] = str(out)
    return env


def _run(tool: str, name: str, tmp_path: Path) -> tuple[nbformat.NotebookNode, str]:
    """Run the example ``name`` with ``tool`` as a user would from its folder; the saved notebook and the log."""
    folder = tmp_path / "example_notebooks"
    shutil.copytree(EXAMPLES, folder, ignore=shutil.ignore_patterns(".synth_nb", "results"))
    saved = tmp_path / f"ran-{name}"
    if tool == "nbconvert":
        command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", name,
                   "--output", str(saved), f"--ExecutePreprocessor.timeout={RUN_SECONDS}"]
    else:
        command = [sys.executable, "-m", "papermill", name, str(saved), "--log-output", "-k", "python3",
                   "--execution-timeout", str(RUN_SECONDS)]
    done = subprocess.run(command, cwd=folder, env=_environment(tmp_path / "out"), capture_output=True, text=True,
                          timeout=RUN_SECONDS + 300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return nbformat.read(saved, as_version=4), done.stdout + done.stderr


@pytest.mark.parametrize(("tool", "name"), [("nbconvert", "sft.ipynb"), ("papermill", "prompt_learning_gepa.ipynb")])
def test_a_headless_run_keeps_each_job_under_100_lines_of_text(tool: str, name: str, tmp_path: Path) -> None:
    """nbconvert and papermill as a user runs them (every example is also run headless by nbclient, the
    executor both use, with the same check: ``test_example_notebooks``)."""
    nb, log = _run(tool, name, tmp_path)
    assert_quiet_job_cell(nb)
    if tool == "papermill":  # the log says how it goes while it runs, in the same few lines
        assert "Final status: succeeded" in log and len(log.splitlines()) < 3 * MAX_JOB_LINES


def test_a_headless_panel_prints_a_line_per_tenth_of_the_work_not_per_update(tmp_path: Path) -> None:
    rec = _recording(tmp_path / "sft10k.jsonl", 10_000, 8.0)
    cell = replay_panel_cell(rec) + """
status = await panel
print(status, len(job.metrics), panel.headless)
await client.aclose()
backend.stop()
"""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    _execute(nb, tmp_path, tmp_path / "out", timeout=300)
    said = "".join(str(o.get("text", "")) for o in nb.cells[0].outputs if o.get("output_type") == "stream")
    assert "succeeded 10000 True" in said
    lines = check_progress(said)
    assert 2 <= len(lines) <= 12, said  # 10,000 metric points and 100 progress events: about one line a tenth
    assert all(m.group(4) == "steps" for m in lines if m.group(4))
    assert said.count("Final status: succeeded · 10000/10000 steps · finished") == 1
    assert not [o for o in nb.cells[0].outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
