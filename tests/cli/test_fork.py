"""``synth-nb train --fork JOB_ID``: the job's config as submitted, in a new TOML to edit, and how to submit it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from bundle_backend import ENV_KEY
from minimal_configs import LOCAL_GEPA

from synth_nb.cli.main import main


def test_fork_writes_the_submitted_config_and_the_command_reproduces_the_plan(
        folder: Path, backend: Any, task_app: Any, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "configs").mkdir()
    (folder / "configs" / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=24))
    assert main(["train", "-c", "configs/gepa.toml", "--backend", backend.url, "--examples", "5"]) == 0
    parent = capsys.readouterr().out.split("submitted prompt_learning job ", 1)[1].split()[0]
    (folder / "configs" / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=99))

    assert main(["train", "--fork", parent]) == 0
    out, err = capsys.readouterr()
    forked = folder / "configs" / f"gepa.fork-{parent}.toml"
    assert f"wrote configs/gepa.fork-{parent}.toml: the config as job {parent} submitted it" in out
    assert "budget = 24" in forked.read_text()  # as submitted, not as the file reads now
    assert "changed since job" in out and ENV_KEY not in out + err
    command = out.strip().splitlines()[-1].strip()
    assert command == (f"synth-nb train --config configs/gepa.fork-{parent}.toml --backend {backend.url}/api "
                       "--examples 5")

    # the printed command, unedited, builds the parent's plan again
    assert main([*shlex.split(command)[1:], "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan == json.loads((folder / "configs" / "results" / parent / "plan.json").read_text())


def test_fork_out_names_the_file_and_refuses_to_overwrite_an_edited_one(
        folder: Path, backend: Any, task_app: Any, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=24))
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url]) == 0
    parent = capsys.readouterr().out.split("submitted prompt_learning job ", 1)[1].split()[0]
    assert main(["train", "--fork", parent, "--out", "mine.toml", "--model", "gpt-4o-mini"]) == 0
    out = capsys.readouterr().out
    assert (folder / "mine.toml").read_bytes() == (folder / "gepa.toml").read_bytes()
    assert out.strip().endswith(f"--config mine.toml --backend {backend.url}/api --model gpt-4o-mini")
    (folder / "mine.toml").write_text("# edited\n")
    assert main(["train", "--fork", parent, "--out", "mine.toml"]) == 2
    assert "mine.toml exists and differs" in capsys.readouterr().err
    assert main(["train", "--fork", "pl_nope"]) == 2
    assert "no bundle of job pl_nope" in capsys.readouterr().err
