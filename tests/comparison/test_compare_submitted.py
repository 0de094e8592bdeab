"""A comparison compares what was sent: two runs of one config whose rollout budget differs by a flag differ
in that key (the submitted plans, flags included, not only the TOML), each run says why it stopped, and an id
no backend knows is a usage error naming it, on the terminal (exit 2) and in the magic (UsageError).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from minimal_configs import LOCAL_GEPA
from shared_fixtures import run_magic

from synth_nb.cli.main import main
from synth_nb.comparison import compare


def _sent(folder: Path, budget: str, capsys: pytest.CaptureFixture[str], backend: Any) -> str:
    assert main(["train", "gepa.toml", "--backend", backend.url, "--yes", "--rollout-budget", budget]) == 0
    found = re.search(r"submitted prompt_learning job (pl_\w+)", capsys.readouterr().out)
    assert found is not None
    return found.group(1)


def test_runs_differing_by_a_flag_differ_in_the_compared_plan(signed_in_folder: Path, backend: Any, task_app: Any,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    folder = signed_in_folder
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=3000))
    a, b = _sent(folder, "40", capsys, backend), _sent(folder, "24", capsys, backend)

    shown = compare([a, b], folder=folder)
    differences = dict(shown.differences())
    assert differences["config_body.prompt_learning.gepa.rollout.budget"] == [40, 24]
    assert differences["--rollout-budget"] == [40, 24]  # the flag that made the difference, named
    assert shown.sources() == ["submitted plan", "submitted plan"]
    assert "No differing" not in shown.to_html()
    rows = {r["job_id"]: r for r in shown.rows()}
    assert all(rows[i]["stopped"].startswith("succeeded: ") for i in (a, b))

    assert main(["train", "--compare", a, b]) == 0
    out = capsys.readouterr().out
    assert "config differences (" in out and "--rollout-budget" in out


def test_an_unknown_id_is_a_usage_error_naming_it_on_both_doors(signed_in_folder: Path, backend: Any,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--compare", "nope_job", "--backend", backend.url]) == 2
    captured = capsys.readouterr()
    assert "no such job to compare: nope_job" in captured.err and "Comparison of 0 runs" not in captured.out
    with pytest.raises(UsageError, match="no such job to compare: nope_job"):
        run_magic(signed_in_folder, f"--compare nope_job --backend {backend.url}")
