"""``%synth_train --fork JOB_ID``: the wizard prefilled from a job's bundle, its Preview diffed against the job."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from _fake_job import FakeJob
from _wizard_support import CANARIES, clean_environ, make_project

from synth_nb import pipeline
from synth_nb.notebook import launch
from synth_nb.notebook.wizard import Wizard
from synth_nb.pipeline import actions
from synth_nb.pipeline.fork import fork_job
from synth_nb.pipeline.request import Request

PARENT = "pl_parent01"
PARENT_TASK_URL = "http://127.0.0.1:8103"


def write_parent_bundle(folder: Path, config: str = "gepa.toml") -> Path:
    """A finished job's bundle as ``write_bundle`` leaves it: its config, overrides and masked plan."""
    path = folder / config
    target = pipeline.resolve_target(None, environ=clean_environ())
    overrides = pipeline.build_overrides({"task_url": PARENT_TASK_URL, "idempotency": "parent-key-1"}, target)
    prepared = pipeline.prepare_config(path, overrides=overrides, target=target,
                                sources=pipeline.SecretSources(environ=clean_environ(), cwd=folder))
    assert prepared.ok and prepared.plan is not None, prepared.error
    bundle = folder / ".synth_nb" / "runs" / PARENT
    bundle.mkdir(parents=True)
    run = {"job_id": PARENT, "status": "succeeded", "flow": "prompt_learning", "backend_url": target.url,
           "config_path": str(path), "config_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
           "embedded": False}
    (bundle / "run.json").write_text(json.dumps(run))
    (bundle / "plan.json").write_text(json.dumps(prepared.plan.preview()))
    (bundle / "overrides.json").write_text(json.dumps({"task_url": PARENT_TASK_URL, "idempotency": "parent-key-1"}))
    (bundle / "config.toml").write_text(path.read_text())
    return bundle


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = make_project(tmp_path / "nb")
    write_parent_bundle(folder)
    return folder


def forked_wizard(project: Path, **kwargs: Any) -> Wizard:
    """The wizard as ``%synth_train --fork PARENT`` opens it (in a clean environment)."""
    fork = fork_job(PARENT, project)
    return Wizard(project, preselect=[fork.config], overrides=fork.overrides, backend=fork.backend,
                  environ=clean_environ(), fork=fork, **kwargs)


async def test_the_fork_opens_prefilled_and_the_same_plan_shows_no_diff(project: Path) -> None:
    wizard = forked_wizard(project)
    assert wizard.forked_from == PARENT
    assert wizard.selected == ["gepa.toml"]
    assert wizard.overrides["task_url"] == PARENT_TASK_URL and not wizard.overrides["idempotency"]
    preview = wizard.previews[0]
    assert preview["has_last"] and preview["diff_open"]
    assert preview["diff_label"] == f"the parent job {PARENT}"
    assert preview["diff"] == []  # the parent's plan exactly (a fresh idempotency key is not part of it)
    assert wizard.can_submit


async def test_a_changed_override_is_the_diff_against_the_parent(project: Path) -> None:
    wizard = forked_wizard(project)
    wizard.overrides = {**wizard.overrides, "task_url": "http://127.0.0.1:9999"}
    diff = wizard.previews[0]["diff"]
    assert diff[0] == f"--- the parent job {PARENT}" and diff[1] == "+++ now"
    changed = [line[0] + line[1:].strip() for line in diff[2:] if line[:1] in "+-"]
    assert changed == [f'-"task_app_url": "{PARENT_TASK_URL}",', '+"task_app_url": "http://127.0.0.1:9999",']
    state = json.dumps(wizard.get_state(), default=str)
    assert not any(canary in state for canary in CANARIES)


async def test_a_config_changed_since_the_job_forks_from_the_bundled_copy(project: Path) -> None:
    original = (project / "gepa.toml").read_text()
    (project / "gepa.toml").write_text(original.replace("val_seeds = [3, 4]", "val_seeds = [3, 4, 5]"))
    fork = fork_job(PARENT, project)
    assert fork.written and fork.config == (project / f"gepa.fork-{PARENT}.toml").resolve()
    assert fork.config.read_text() == original
    assert any("changed since job" in note for note in fork.notes)
    wizard = forked_wizard(project)
    assert wizard.selected == [f"gepa.fork-{PARENT}.toml"]
    assert wizard.previews[0]["diff"] == []  # the config as submitted: the same plan as the parent's


async def test_submitting_the_fork_sends_the_changed_plan(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[Any] = []

    async def fake_submit(batch: Any, *_: Any, **__: Any) -> list[Any]:
        assert batch.forked_from == PARENT  # the child's bundle names its parent
        sent.extend(batch.prepared)
        return [FakeJob("prompt_learning", job_id="pl_child")]

    monkeypatch.setattr(actions, "send", fake_submit)
    wizard = forked_wizard(project, on_submitted=lambda jobs: None)
    wizard.overrides = {**wizard.overrides, "task_url": "http://127.0.0.1:9999"}
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert wizard.submit_task is not None
    assert [j.id for j in await wizard.submit_task] == ["pl_child"]
    body = json.dumps(sent[0].plan.preview())
    assert "http://127.0.0.1:9999" in body and PARENT_TASK_URL not in body


def run_magic(project: Path, line: str) -> Any:
    """``%synth_train line`` in a notebook of ``project``."""
    from IPython.testing.globalipapp import get_ipython

    ip = get_ipython()
    ip.run_line_magic("load_ext", "synth_nb")
    ip.user_ns["__session__"] = str(project / "fork.ipynb")
    try:
        return ip.run_line_magic("synth_train", line)
    finally:
        ip.user_ns.pop("__session__", None)


def test_headless_the_magic_prints_the_config_and_the_command(project: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    fork = run_magic(project, f"--fork {PARENT} --examples 3")
    out = capsys.readouterr().out
    assert f"fork of job {PARENT}" in out and f"using gepa.toml: the config as job {PARENT} submitted it" in out
    hosted = pipeline.resolve_target(None, environ=clean_environ()).url  # where the parent went
    assert f"%synth_train --config gepa.toml --backend {hosted} --task-url {PARENT_TASK_URL} --examples 3" in out
    assert fork.overrides == {"task_url": PARENT_TASK_URL, "examples": 3}


def test_fork_refuses_a_config_and_an_unknown_job(project: Path) -> None:
    from synth_nb.errors import ConfigError

    with pytest.raises(ConfigError, match="drop --config"):
        launch.fork_of(Request(folder=project, fork=PARENT, configs=[project / "sft.toml"]))
    with pytest.raises(ConfigError, match="no bundle of job pl_nope"):
        launch.fork_of(Request(folder=project, fork="pl_nope"))


async def test_the_magic_opens_the_wizard_on_the_bundled_copy_and_says_why(
        project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from synth_nb.notebook import magics

    monkeypatch.setattr(magics, "has_widget_frontend", lambda shell: True)
    (project / "gepa.toml").write_text((project / "gepa.toml").read_text().replace("[3, 4]", "[3, 4, 5]"))
    wizard = run_magic(project, f"--fork {PARENT} --max-rollouts 60")
    out = capsys.readouterr().out
    assert f"wrote gepa.fork-{PARENT}.toml: the config as job {PARENT} submitted it" in out
    assert "changed since job" in out
    assert isinstance(wizard, Wizard) and wizard.selected == [f"gepa.fork-{PARENT}.toml"]
    assert wizard.forked_from == PARENT and wizard._request.limits == {"max_rollouts": 60}


def test_a_backend_that_now_listens_elsewhere_is_not_a_difference(project: Path) -> None:
    fork = fork_job(PARENT, project)
    old = fork.parent_backend_url
    fork.plan = {"steps": [{"body": {"metadata": {"backend_base_url": old}}}]}
    assert old in fork.baseline() and old in fork.baseline(old)
    moved = fork.baseline("http://127.0.0.1:4242/api")
    assert old not in moved and '"backend_base_url": "http://127.0.0.1:4242/api"' in moved
