"""Headless runs are quiet and useful: ``jupyter nbconvert --execute`` and ``papermill`` (no front end) run
the example notebooks, and the saved notebook's text output of the job (its cell's stream text and each
output's text copy) stays under 100 lines: no button row, a progress line at most each tenth of the work
or every 30 s, a final block, the summary's text copy cut short; papermill's log says the same as it runs.
A replayed 10,000-step job shows the rule at work: a line per tenth, not per update."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from test_example_notebooks import EXAMPLES, _execute, _recording, replay_panel_cell

pytestmark = pytest.mark.notebook

#: the most text lines one job may leave in a headless run's saved notebook
MAX_JOB_LINES = 100
PROGRESS = re.compile(r"^\S+ progress: (\w+)(?: · ([\d.]+)/([\d.]+) (\w+)(?: \((\d+)%\))?)?", re.M)
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


def _text(output: dict[str, Any]) -> str:
    if output.get("output_type") == "stream":
        return str(output.get("text", ""))
    return str(output.get("data", {}).get("text/plain", ""))


def _job_cell(nb: nbformat.NotebookNode) -> Any:
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and "%synth_train" in c.source and "--wait" in c.source]
    return cell


def _check_progress(said: str) -> list[re.Match[str]]:
    """The progress lines: at most one per tenth of the work (and a heartbeat per 30 s), marks only growing."""
    lines = list(PROGRESS.finditer(said))
    marks = [int(m.group(5)) // 10 for m in lines if m.group(5) is not None]
    assert marks == sorted(set(marks)), marks
    assert len(lines) <= 11 + len(lines) - len(marks)  # the heartbeats are the lines without a percentage
    return lines


@pytest.mark.parametrize(("tool", "name"), [("nbconvert", p.name) for p in sorted(EXAMPLES.glob("*.ipynb"))]
                         + [("papermill", "prompt_learning_gepa.ipynb"), ("papermill", "rl.ipynb")])
def test_a_headless_run_keeps_each_job_under_100_lines_of_text(tool: str, name: str, tmp_path: Path) -> None:
    nb, log = _run(tool, name, tmp_path)
    outputs = _job_cell(nb).outputs
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert not [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    text = "".join(_text(o) if _text(o).endswith("\n") else _text(o) + "\n" for o in outputs)
    lines = text.splitlines()
    assert len(lines) < MAX_JOB_LINES, "\n".join(lines)
    said = "".join(str(o.get("text", "")) for o in outputs if o.get("output_type") == "stream")
    assert len(re.findall(r"^Final status: succeeded · ", said, re.M)) == 1, said
    assert "  last metrics: " in said
    _check_progress(said)
    html = [str(o.get("data", {}).get("text/html", "")) for o in outputs]
    assert any("data-status='succeeded'" in h for h in html)  # the status output still holds the final state
    assert len([o for o in outputs if "image/png" in o.get("data", {})]) == 1  # and the chart
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
    lines = _check_progress(said)
    assert 2 <= len(lines) <= 12, said  # 10,000 metric points and 100 progress events: about one line a tenth
    assert all(m.group(4) == "steps" for m in lines if m.group(4))
    assert said.count("Final status: succeeded · 10000/10000 steps · finished") == 1
    assert not [o for o in nb.cells[0].outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
