"""Credentials in a task-app URL (``--task-url http://user:KEY@host/...``) are used for the calls, and shown
or stored nowhere: not in the pre-flight line, not in the backend's database, not in its job answers."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from minimal_configs import MINIMAL_GEPA

from synth_nb.cli.main import main
from synth_nb.local.redact import restore_secrets, secret_values, withhold_secrets

ENV_KEY = "sk_env_CANARY_taskurl_dddddd_4444"
PASSWORD = "sk_CANARY_in_userinfo_0123456789"


@pytest.fixture()
def backend(tmp_path: Path) -> Iterator[Any]:
    from synth_nb.local import start_backend

    with start_backend(port=0, data_dir=tmp_path / "data", default_executor="replay",
                       executor_options={"replay": {"speed": 50}}) as b:
        yield b


@pytest.fixture()
def task_app() -> Iterator[Any]:
    from synth_nb.local.examples import start_task_app

    with start_task_app("banking", api_key=ENV_KEY) as app:
        yield app


def test_task_url_credentials_are_not_printed_or_stored(tmp_path: Path, backend: Any, task_app: Any,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    for var in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_SKIP_TASK_APP_HEALTH_CHECK"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
    monkeypatch.setenv("ENVIRONMENT_API_KEY", ENV_KEY)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gepa.toml").write_text(MINIMAL_GEPA)
    url = task_app.url.replace("http://", f"http://user:{PASSWORD}@")
    assert main(["train", "-c", "gepa.toml", "--backend", backend.url, "--task-url", url, "--no-poll"]) == 0
    out, err = capsys.readouterr()
    assert "task app http://••••@127.0.0.1:" in err and ": healthy" in err
    assert PASSWORD not in out + err
    database = sqlite3.connect(tmp_path / "data" / "backend.sqlite3")
    try:
        rows = [str(row) for row in database.execute("SELECT * FROM jobs")]
    finally:
        database.close()
    assert rows and all(PASSWORD not in row for row in rows)
    assert any("127.0.0.1" in row for row in rows)  # the URL is stored, masked
    jobs = httpx.get(f"{backend.url}/api/prompt-learning/online/jobs",
                     headers={"Authorization": f"Bearer {backend.api_key}"}, timeout=30).text
    assert PASSWORD not in jobs


def test_a_url_with_credentials_is_withheld_and_restored_for_the_executor() -> None:
    body = {"prompt_learning": {"task_app_url": f"http://u:{PASSWORD}@host:1/x", "other": "http://host/y",
                                "urls": [f"https://{PASSWORD}@host:2"]}}
    stored, withheld = withhold_secrets(body)
    assert PASSWORD not in str(stored) and stored["prompt_learning"]["other"] == "http://host/y"
    assert stored["prompt_learning"]["task_app_url"].endswith("@host:1/x")
    assert stored["prompt_learning"]["urls"][0].endswith("@host:2")
    assert restore_secrets(stored, withheld) == body
    assert PASSWORD in secret_values(body)  # so events and errors that quote the URL are scrubbed
