"""``--rerun`` and ``--fork`` after the embedded backend restarted on another port.

The parent job was scored by the embedded backend's own copy of the bundled banking task app (``--task-url``
pointing at the backend's port, as the pre-flight hint says to pass it). After a restart that port is gone:
a re-run uses the copy on the backend now running and says so, ``--task-url`` given now beats the recorded
one, and the command ``--fork`` prints carries no old port.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from minimal_configs import LOCAL_GEPA
from shared_fixtures import run_magic

from synth_nb.cli.main import main
from synth_nb.pipeline import stop_local_backend, use_local_backend

#: a port nothing listens on: the config's own task URL, which the parent overrode with --task-url
UNUSED_TASK_URL = "http://127.0.0.1:9"


def _submitted(out: str) -> str:
    return out.split("submitted prompt_learning job ", 1)[1].split()[0]


def _task_app_urls(folder: Path, job_id: str) -> set[str]:
    """Every task app URL in the plan the job was submitted with (its bundle's ``plan.json``)."""
    text = (folder / "results" / job_id / "plan.json").read_text()
    return {value for key, value in _pairs(json.loads(text)) if key == "task_app_url"}


def _pairs(doc: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield key, value
            yield from _pairs(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from _pairs(value)


@pytest.fixture()
def moved(request: pytest.FixtureRequest, folder: Path, backend: Any, backend_options: dict[str, Any],
          capsys: pytest.CaptureFixture[str]) -> Iterator[tuple[str, str, Any]]:
    """``(parent job id, its task URL, the new backend)``: a GEPA job run on the embedded backend with that
    backend's bundled banking app, then the backend stopped and started again on another port.

    The app is given with ``--task-url``, or (``indirect`` param False) found by the config's task name
    because the config's own URL does not answer.
    """
    from synth_nb.local import start_backend

    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=UNUSED_TASK_URL, budget=24))
    old_task_url = backend.task_app_url("banking")
    flag = ["--task-url", old_task_url] if getattr(request, "param", True) else []
    use_local_backend(backend)
    try:
        assert main(["train", "-c", "gepa.toml", "--backend", "local", *flag]) == 0
        parent = _submitted(capsys.readouterr().out)
        assert _task_app_urls(folder, parent) == {old_task_url}
        backend.stop()
        with start_backend(port=0, **backend_options) as restarted:
            assert urlsplit(restarted.url).port != urlsplit(backend.url).port
            use_local_backend(restarted)
            yield parent, old_task_url, restarted
    finally:
        stop_local_backend()


def test_a_rerun_uses_the_bundled_task_app_of_the_backend_now_running(
        folder: Path, moved: tuple[str, str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    parent, old_task_url, restarted = moved
    assert main(["train", "--rerun", parent]) == 0
    out, err = capsys.readouterr()
    child = _submitted(out)
    new_task_url = restarted.task_app_url("banking")
    said = [line for line in err.splitlines() if line.startswith("task app: ")]
    assert said == [f"task app: the job used the embedded backend's bundled 'banking' task app at {old_task_url}; "
                    f"the re-run uses its copy on the backend now running, at {new_task_url}"]
    assert f"diff against job {parent}: none" in err
    assert _task_app_urls(folder, child) == {new_task_url}
    run = json.loads((folder / "results" / child / "run.json").read_text())
    assert run["parent"] == parent and run["status"] == "succeeded"


@pytest.mark.parametrize("moved", [False], indirect=True)
def test_a_rerun_of_a_job_that_found_the_bundled_app_by_name_finds_it_again(
        folder: Path, moved: tuple[str, str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    parent, _, restarted = moved
    assert main(["train", "--rerun", parent]) == 0
    out, err = capsys.readouterr()
    new_task_url = restarted.task_app_url("banking")
    assert err.count("does not answer: using the embedded backend's bundled") == 1  # said once, beside the diff
    assert (f"task app {UNUSED_TASK_URL} does not answer: using the embedded backend's bundled 'banking' task app "
            f"at {new_task_url}") in err
    assert f"diff against job {parent}: none" in err
    assert _task_app_urls(folder, _submitted(out)) == {new_task_url}


def test_a_task_url_given_with_rerun_beats_the_recorded_one(
        folder: Path, moved: tuple[str, str, Any], task_app: Any, capsys: pytest.CaptureFixture[str]) -> None:
    parent, old_task_url, _ = moved
    assert main(["train", "--rerun", parent, "--task-url", task_app.url]) == 0
    out, err = capsys.readouterr()
    child = _submitted(out)
    assert f"task app: the job used {old_task_url}, the re-run uses {task_app.url} (--task-url)" in err
    assert _task_app_urls(folder, child) == {task_app.url}
    assert json.loads((folder / "results" / child / "overrides.json").read_text())["task_url"] == task_app.url


def test_the_fork_command_carries_no_old_port(folder: Path, moved: tuple[str, str, Any],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    parent, old_task_url, _ = moved
    old_port = f":{urlsplit(old_task_url).port}"
    assert main(["train", "--fork", parent]) == 0
    out = capsys.readouterr().out
    command = next(line.strip() for line in out.splitlines() if line.strip().startswith("synth-nb train "))
    assert old_port not in command and "--task-url" not in command and "--backend local" in command
    assert (f"the job used the embedded backend's bundled 'banking' task app at {old_task_url}: the fork uses "
            "the embedded backend's copy, wherever it listens now") in out


async def test_the_notebook_fork_opens_the_wizard_on_the_running_backends_copy(
        folder: Path, moved: tuple[str, str, Any], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from synth_nb.notebook import magics

    parent, old_task_url, restarted = moved
    monkeypatch.setattr(magics, "has_widget_frontend", lambda shell: True)
    wizard = run_magic(folder, f"--fork {parent}", "fork.ipynb")
    out = capsys.readouterr().out
    assert f"task app at {old_task_url}: the fork uses the embedded backend's copy, wherever it listens now" in out
    assert "task_url" not in wizard.overrides or wizard.overrides["task_url"] != old_task_url
    (preview,) = wizard.previews
    assert restarted.task_app_url("banking") in preview["preview"] and old_task_url not in preview["preview"]
