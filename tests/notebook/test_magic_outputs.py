"""What ``%synth_train`` cells leave under them in a real kernel (nbclient): what they showed, once, and no raw
Python value after it.

A magic that displayed its result (pre-flight cards, a dry run's preview, an attached job's panel) returns it
without a second display; a failed dry run leaves no ``[]``; a ``Job`` held in a variable shows its current
status in a later cell; a reporter says where its run is (the ``tensorboard --logdir`` / ``mlflow ui`` line).
Jobs go to an embedded local backend that replays bundled recordings (no task app, nothing trains).
"""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _wizard_support import CANARIES, make_project  # noqa: E402

pytestmark = pytest.mark.notebook

#: what a raw Python value looks like in an output
RAW = re.compile(r"\b(Plan|Job|PreflightCard|MLflowReporter|TensorBoardReporter|PosixPath)\(|object at 0x|^\[\]$", re.M)

SETUP = """\
%load_ext synth_nb
from synth_nb.local import start_backend
from synth_nb.pipeline import use_local_backend
use_local_backend(start_backend(default_executor='replay', executor_options={'replay': {'speed': 50}}))
"""


def _run(tmp_path: Path, cells: list[str]) -> tuple[Path, list[list[dict[str, Any]]]]:
    """The shared test project in ``tmp_path``, and the outputs of ``cells`` run there (the setup cell first)."""
    folder = make_project(tmp_path / "nb")
    cells = [SETUP, *cells]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    env = {k: v for k, v in os.environ.items() if k not in {"MPLBACKEND", "SYNTH_API_KEY", "ENVIRONMENT_API_KEY",
                                                               "SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL"}}
    env.update(SYNTH_SKIP_TASK_APP_HEALTH_CHECK="1", SYNTH_NB_WIDGETS="0", SYNTH_NB_BACKEND_DIR=str(folder / "be"))
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute(env=env)
    saved = nbformat.writes(nb)
    assert not any(c in saved for c in CANARIES)
    return folder, [list(cell.get("outputs", [])) for cell in nb.cells]


def _values(outputs: list[dict[str, Any]]) -> list[str]:
    """The cell's ``Out[N]`` values, as text."""
    return [str(o["data"].get("text/plain", "")) for o in outputs if o["output_type"] == "execute_result"]


def _text(outputs: list[dict[str, Any]]) -> str:
    return "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for o in outputs)


def test_magic_cells_show_their_result_once_and_no_raw_value(tmp_path: Path) -> None:
    _, cells = _run(tmp_path, [
        "%synth_train -c gepa.toml --check --backend local",
        "%synth_train -c gepa.toml --dry-run --backend local",
        "%synth_train -c broken.toml --dry-run --backend local",
        "job = %synth_train -c gepa.toml --backend local --yes --wait",
        "%synth_train --attach {job.id} --backend local",
        "plans = %synth_train -c gepa.toml -c sft.toml --dry-run --backend local",
        "plans",
        "job",
        "job.explorer()",
    ])
    check, dry, failed, _, attach, _, plans, job, explorer = cells[1:]

    # --check: the card as HTML, not again as a text list
    assert any("text/html" in o.get("data", {}) for o in check)
    assert _values(check) == []
    # --dry-run: the preview is printed; the plans are not shown again; a failed one leaves no []
    assert "gepa.toml" in _text(dry) and _values(dry) == []
    assert "trainer_mode" in _text(failed) and _values(failed) == []
    # --attach: the panel, and no Job(… status='running') frozen under it
    assert "succeeded" in _text(attach) and _values(attach) == []
    assert not [o for o in attach if RAW.search(_text([o]))]
    # values held in variables: shown in a later cell as what they are now, one line each
    assert _text(plans).splitlines() == ["Plan(prompt_learning/gepa from gepa.toml: POST /prompt-learning/online/jobs)",
                                         "Plan(sft from sft.toml: POST /files, POST /learning/jobs, "
                                         "POST /learning/jobs/{job_id}/start)"]
    assert re.fullmatch(r"Job\(id='pl_\w+', flow='prompt_learning', status='succeeded', events=\d+\)", _text(job))
    # the explorer's axes have round ticks, as the panel's chart has (not 19, 180, 341 …)
    page = "".join(str(o.get("data", {}).get("text/html", "")) for o in explorer)
    for svg in re.findall(r"<svg class=\"synth-pareto\".*?</svg>", page, flags=re.S):
        _assert_round(re.findall(r'text-anchor="middle">([\d.]+)</text>', svg))  # the x axis
        _assert_round(re.findall(r'text-anchor="end">([\d.]+)</text>', svg))  # the y axis
    for index, outputs in enumerate(cells[1:7], start=1):
        assert not RAW.search(_text([o for o in outputs if o["output_type"] != "stream"])), (index, outputs)


def _assert_round(labels: list[str]) -> None:
    """Ticks evenly spaced by 1, 2, 2.5 or 5 times a power of ten, each a multiple of that step."""
    values = [float(v) for v in labels]
    assert len(values) >= 2, labels
    step = values[1] - values[0]
    assert all(abs((b - a) - step) < 1e-9 for a, b in zip(values, values[1:], strict=False)), labels
    scaled = step / 10 ** math.floor(math.log10(step))
    assert any(abs(scaled - m) < 1e-6 for m in (1, 2, 2.5, 5)), labels
    assert all(abs(v / step - round(v / step)) < 1e-6 for v in values), labels


def test_a_reporter_says_where_its_run_is(tmp_path: Path) -> None:
    folder, cells = _run(tmp_path, [
        "job = %synth_train -c gepa.toml --backend local --yes --wait",
        "job.report_to('tensorboard', report_dir='runs')",
        "job.report_to('mlflow', report_dir='runs')",
    ])
    [board] = _values(cells[2])
    assert re.fullmatch(r"\[TensorBoardReporter\(job='pl_\w+', ended, points=\d+\) → tensorboard --logdir runs\]", board)
    [mlflow] = _values(cells[3])
    assert re.fullmatch(r"\[MLflowReporter\(job='pl_\w+', ended, points=\d+\) → "
                        r"mlflow ui --backend-store-uri sqlite:///runs/mlflow\.db\]", mlflow), mlflow
    assert (folder / "runs" / "mlflow.db").is_file()


def test_a_finished_job_says_why_it_stopped_and_what_it_used_beside_its_estimate(tmp_path: Path) -> None:
    """The panel a headless ``--wait`` leaves: its status ends on the job's one stop reason, then the estimate
    it was sent with (from its plan) beside each figure it used, as the terminal's final block says it."""
    folder, cells = _run(tmp_path, ["job = %synth_train -c gepa.toml --backend local --yes --wait",
                                    "sft = %synth_train -c sft.toml --backend local --yes --wait"])
    gepa, sft = _text(cells[1]), _text(cells[2])
    assert "succeeded: the search used its rollout budget (budget_exhausted" in gepa, gepa
    lines = gepa.splitlines()
    assert any(line.startswith("estimate: from the plan (no dry run at submission") for line in lines), gepa
    # this config names no rollout budget: the estimate says so beside the count the job reported
    assert "rollouts: 168 · not estimated: no rollout.budget in [prompt_learning.gepa]: the backend decides" in lines
    assert "cost:     $0.0000 · estimate $0 (the embedded backend runs on this machine)" in lines
    assert "succeeded: it ran all its planned training steps (max_steps: 120 of 120 steps)" in sft, sft
    assert "Job finished: off" not in gepa + sft and "not pressed" not in gepa + sft
