"""The follow stage is one, whichever door: a job sent with ``--no-poll`` and followed to its end later
(``synth-nb attach``, ``synth-nb train --attach``, ``%synth_train --attach``; sent from the wizard too) gets its
bundle and result files, written once, and ``--rerun`` / ``--fork`` of it then work.

Against the real embedded backend over HTTP (no default executor: each config picks its own, see
``tests/bundle_backend.py``) and the bundled banking task app; a GEPA job of 24 rollouts ends in seconds.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from minimal_configs import LOCAL_GEPA
from shared_fixtures import run_magic

from synth_nb.cli.main import main
from synth_nb.pipeline.request import Request

#: what a prompt-learning job's folder holds once it ended while followed
BUNDLED = {"run.json", "config.toml", "plan.json", "overrides.json", "datasets.json", "events.jsonl",
           "metrics.jsonl", "status.json", "README.md", "summary.md", "summary_curve.png"}


def _sent_without_following(folder: Path, backend: Any, task_app: Any, capsys: pytest.CaptureFixture[str]) -> str:
    """``synth-nb train --no-poll`` of a small GEPA job: its id (the last line of stdout)."""
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=24))
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "--no-poll"]) == 0
    return capsys.readouterr().out.strip().splitlines()[-1]


def _stamps(bundle: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in bundle.iterdir() if p.is_file()}


def _assert_bundled_once(folder: Path, job_id: str, follow_again: Callable[[], Any]) -> None:
    """The job's folder holds its bundle and result files; following it to its end again writes nothing."""
    bundle = folder / "results" / job_id
    written = _stamps(bundle)
    assert set(written) >= BUNDLED, sorted(written)
    assert "submitted.json" not in written  # the record kept at submission became the bundle
    follow_again()
    assert _stamps(bundle) == written


def _assert_rerun_and_fork_work(folder: Path, backend: Any, job_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["train", "--rerun", job_id, "--backend", backend.url, "--dry-run"]) == 0
    assert f"diff against job {job_id}: none" in capsys.readouterr().err
    assert main(["train", "--fork", job_id]) == 0
    assert f"fork of job {job_id} (bundle results/{job_id})" in capsys.readouterr().out


def test_synth_nb_attach_writes_the_bundle_of_a_no_poll_job(folder: Path, backend: Any, task_app: Any,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    job_id = _sent_without_following(folder, backend, task_app, capsys)
    assert not (folder / "results" / job_id / "run.json").exists()
    assert main(["attach", job_id]) == 0
    out = capsys.readouterr().out
    assert out.count(f"  bundle:   {folder / 'results' / job_id}") == 1
    assert f"  summary:  {folder / 'results' / job_id / 'summary.md'}" in out
    _assert_bundled_once(folder, job_id, lambda: main(["attach", job_id]))
    _assert_rerun_and_fork_work(folder, backend, job_id, capsys)


def test_train_attach_writes_the_bundle_of_a_no_poll_job(folder: Path, backend: Any, task_app: Any,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    job_id = _sent_without_following(folder, backend, task_app, capsys)
    assert main(["train", "--attach", job_id]) == 0
    assert f"  bundle:   {folder / 'results' / job_id}" in capsys.readouterr().out
    _assert_bundled_once(folder, job_id, lambda: main(["train", "--attach", job_id]))
    _assert_rerun_and_fork_work(folder, backend, job_id, capsys)


def test_the_magics_attach_writes_the_bundle_of_a_no_poll_job(folder: Path, backend: Any, task_app: Any,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    job_id = _sent_without_following(folder, backend, task_app, capsys)
    job = run_magic(folder, f"--attach {job_id}")  # headless: the cell blocks until the job ends
    assert job.status == "succeeded"
    _assert_bundled_once(folder, job_id, lambda: run_magic(folder, f"--attach {job_id}"))
    _assert_rerun_and_fork_work(folder, backend, job_id, capsys)


async def test_a_job_the_wizard_sent_with_no_poll_gets_its_bundle_once_attached(
        folder: Path, backend: Any, task_app: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from synth_nb.notebook.wizard import Wizard

    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=24))
    wizard = Wizard(folder, preselect=[folder / "gepa.toml"], backend=backend.url, environ=dict(os.environ),
                    request=Request(folder, poll=False), on_submitted=lambda jobs: None)
    assert wizard.can_submit, wizard.blockers
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert wizard.submit_task is not None
    (sent,) = await wizard.submit_task
    assert wizard.submit_error == "" and wizard.panels == []  # --no-poll: nothing follows it
    await sent.client.aclose()
    job = run_magic(folder, f"--attach {sent.id}")
    assert job.status == "succeeded"
    _assert_bundled_once(folder, sent.id, lambda: run_magic(folder, f"--attach {sent.id}"))
    _assert_rerun_and_fork_work(folder, backend, sent.id, capsys)
