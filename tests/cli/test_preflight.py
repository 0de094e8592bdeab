"""The task app is checked from here before a prompt-learning job is created (as synth-ai 0.2.24 does).

A dead or key-refusing task app is one plain sentence naming the URL, exit 2, and no job on the backend;
a healthy one is said and the job goes ahead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from minimal_configs import MINIMAL_GEPA
from pydantic import SecretStr
from shared_fixtures import prompt_learning_jobs

from synth_nb.cli.main import main
from synth_nb.flows import get_flow
from synth_nb.pipeline import TaskAppUnhealthy, check_task_app, require_healthy_task_apps
from synth_nb.plan import Plan, TaskApp

ENV_KEY = "sk_env_CANARY_preflight_cccccc_3333"


@pytest.fixture()
def backend_options() -> dict[str, Any]:
    return {"default_executor": "replay", "executor_options": {"replay": {"speed": 50}}}


@pytest.fixture()
def folder(signed_in_folder: Path, monkeypatch: pytest.MonkeyPatch, shared_backend_folder: str) -> Path:
    monkeypatch.setenv("SYNTH_NB_BACKEND_DIR", shared_backend_folder)  # the session's, stopped at its end
    return signed_in_folder



def test_dead_task_app_exits_2_naming_the_url_and_creates_nothing(folder: Path, backend: Any,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "gepa.toml").write_text(MINIMAL_GEPA.replace("http://127.0.0.1:8102", "http://127.0.0.1:9"))
    code = main(["train", "-c", "gepa.toml", "--backend", backend.url])
    out, err = capsys.readouterr()
    assert code == 2
    assert "http://127.0.0.1:9" in err and "cannot be reached" in err and "Nothing was submitted" in err
    assert err.count("error:") == 1 and "Traceback" not in err
    assert ENV_KEY not in out + err
    assert prompt_learning_jobs(backend) == []


def test_on_the_embedded_backend_a_dead_task_app_points_at_the_bundled_ones(
        folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The examples' task_app_url is for a task app run by hand; the embedded backend serves them too."""
    (folder / "gepa.toml").write_text(MINIMAL_GEPA.replace("http://127.0.0.1:8102", "http://127.0.0.1:9"))
    code = main(["train", "-c", "gepa.toml", "--backend", "local"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("error:") == 1 and "Traceback" not in err
    served = err.split("pass --task-url ", 1)[1].split(" (banking)", 1)[0]
    assert served.startswith("http://127.0.0.1:") and served.endswith("/task-apps/banking")
    assert httpx.get(f"{served}/health", timeout=30).status_code in (200, 400, 401)  # it is served there
    assert err.rstrip().endswith("Nothing was submitted.")


def test_wrong_key_is_named_as_the_problem(folder: Path, backend: Any, task_app: Any, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ENVIRONMENT_API_KEY", "sk_env_not_the_right_key_9999")
    (folder / "gepa.toml").write_text(MINIMAL_GEPA.replace("http://127.0.0.1:8102", task_app.url))
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url]) == 2
    err = capsys.readouterr().err
    assert "refused the ENVIRONMENT_API_KEY" in err and "not_the_right_key" not in err
    assert prompt_learning_jobs(backend) == []


def test_healthy_task_app_is_said_and_the_job_is_created(folder: Path, backend: Any, task_app: Any,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "gepa.toml").write_text(MINIMAL_GEPA.replace("http://127.0.0.1:8102", task_app.url))
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "--no-poll"]) == 0
    out, err = capsys.readouterr()
    assert f"task app {task_app.url}: healthy" in err
    assert len(prompt_learning_jobs(backend)) == 1


def test_skip_setting_sends_without_checking(folder: Path, backend: Any, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SYNTH_SKIP_TASK_APP_HEALTH_CHECK", "1")
    (folder / "gepa.toml").write_text(MINIMAL_GEPA.replace("http://127.0.0.1:8102", "http://127.0.0.1:9"))
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "--no-poll"]) == 0
    err = capsys.readouterr().err
    assert "task app http://127.0.0.1:9:" not in err  # no check line (the preview names the task app)
    assert len(prompt_learning_jobs(backend)) == 1


def test_503_says_the_task_app_has_no_key() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(503, json={"detail": "no key"}))
    check = check_task_app(TaskApp("http://task.example", SecretStr(ENV_KEY)), transport=transport)
    assert not check.ok and check.status == 503 and "no ENVIRONMENT_API_KEY configured" in check.line()


def test_each_task_app_is_checked_once_and_all_failures_are_listed() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(401 if "bad" in str(request.url) else 200, json={})

    plans = [Plan("prompt_learning", "gepa", [],
                  endpoints=get_flow("prompt_learning").endpoints, task_app=TaskApp(url, SecretStr(ENV_KEY)))
             for url in ("http://good.example", "http://good.example", "http://bad.example")]
    with pytest.raises(TaskAppUnhealthy) as caught:
        require_healthy_task_apps(plans, transport=httpx.MockTransport(handler))
    assert "http://bad.example" in str(caught.value) and "good.example" not in str(caught.value)
    assert seen.count("http://good.example/health") == 1
    assert caught.value.exit_code == 2


EXAMPLES = Path(__file__).parents[2] / "example_notebooks" / "configs"


@pytest.mark.parametrize("name", ["banking_gepa.toml", "banking_mipro.toml"])
def test_a_bundled_example_runs_as_it_is_on_the_embedded_backend(
        name: str, folder: Path, backend: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Its task_app_url (a task app run by hand on 8102) does not answer: the embedded backend's own copy of
    the task app it names is used, said in one line, with no flag and nothing started by hand.

    The URL is moved to port 9, where nothing listens, so a task app someone runs on 8102 on this machine
    cannot answer in its place; the config is otherwise the example as shipped."""
    from synth_nb import pipeline

    (folder / "configs").mkdir()
    (folder / "configs" / name).write_text((EXAMPLES / name).read_text().replace(":8102", ":9"))
    pipeline.use_local_backend(backend)
    try:
        code = main(["train", "--config", f"configs/{name}", "--backend", "local", "--no-poll"])
        jobs = prompt_learning_jobs(backend)
    finally:
        pipeline.stop_local_backend()
    out, err = capsys.readouterr()
    assert code == 0, err
    served = f"{backend.url}/task-apps/banking"
    said = [line for line in (out + err).splitlines() if "bundled 'banking' task app" in line]
    assert said == [f"task app http://127.0.0.1:9 does not answer: using the embedded backend's bundled "
                    f"'banking' task app at {served}"]
    assert f"task app {served}: healthy" in err and "--task-url" not in out + err
    assert len(jobs) == 1


def test_a_task_the_embedded_backend_does_not_bundle_is_never_replaced(
        folder: Path, backend: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from synth_nb import pipeline

    config = (EXAMPLES / "banking_gepa.toml").read_text().replace(":8102", ":9")
    (folder / "gepa.toml").write_text(config.replace('task_app_id = "banking"', 'task_app_id = "my_task"')
                                      .replace('env_name = "banking"', 'env_name = "my_task"'))
    pipeline.use_local_backend(backend)
    try:
        code = main(["train", "--config", "gepa.toml", "--backend", "local", "--no-poll"])
        jobs = prompt_learning_jobs(backend)
    finally:
        pipeline.stop_local_backend()
    err = capsys.readouterr().err
    assert code == 2 and "task app http://127.0.0.1:9: cannot be reached" in err
    assert jobs == []
