"""Secrets sent in job bodies reach the executor but never the disk: masked in SQLite, 0600 files."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from local_backend_helpers import API_KEY, wait_terminal

from synth_nb.local import start_backend
from synth_nb.local.executors import EXECUTORS
from synth_nb.local.storage import Storage

SECRET = "sk_env_at_rest_canary_4f1d2e3c"


@pytest.fixture(autouse=True)
def probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(EXECUTORS, "rl", "local_executor_doubles:KeyProbe")
    monkeypatch.setitem(EXECUTORS, "sft", "local_executor_doubles:KeyProbe")
    yield


def _rl_body(auto_start: bool = True) -> dict[str, object]:
    return {"data": {"endpoint_base_url": "http://127.0.0.1:9"}, "auto_start": auto_start,
            "metadata": {"task_app_api_key": SECRET}}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _bytes_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def test_the_executor_gets_the_key_the_database_only_its_mask(backend, client: httpx.Client) -> None:
    job = client.post("/rl/jobs", json=_rl_body()).json()["job_id"]
    done = wait_terminal(client, f"/rl/jobs/{job}")
    assert done["status"] == "succeeded"
    assert done["key_digest"] == hashlib.sha256(SECRET.encode()).hexdigest()
    assert SECRET.encode() not in _bytes_under(backend.data_dir)
    with sqlite3.connect(backend.data_dir / "backend.sqlite3") as db:
        (body,) = db.execute("SELECT body FROM jobs WHERE id=?", (job,)).fetchone()
    assert json.loads(body)["metadata"]["task_app_api_key"] == f"••••{SECRET[-4:]}"
    config = client.get(f"/rl/jobs/{job}/config").json()["config"]
    assert config["metadata"]["task_app_api_key"] == f"••••{SECRET[-4:]}"


def test_database_and_uploads_are_owner_only(backend, client: httpx.Client) -> None:
    uploaded = client.post("/files", files={"file": ("t.jsonl", b"{}\n")}, data={"purpose": "fine-tune"}).json()
    client.post("/rl/jobs", json=_rl_body())
    database = backend.data_dir / "backend.sqlite3"
    for path in (database, database.with_name("backend.sqlite3-wal"), database.with_name("backend.sqlite3-shm"),
                 backend.data_dir / "files" / f"{uploaded['id']}.bin"):
        assert path.exists() and _mode(path) == 0o600, path
    assert _mode(backend.data_dir / "files") == 0o700 and _mode(backend.data_dir / "jobs") == 0o700


def test_an_existing_world_readable_database_is_made_private(tmp_path: Path) -> None:
    Storage(tmp_path).close()
    (tmp_path / "backend.sqlite3").chmod(0o644)
    Storage(tmp_path).close()
    assert _mode(tmp_path / "backend.sqlite3") == 0o600


def test_bodies_stored_in_clear_by_an_older_version_are_masked_on_open(tmp_path: Path) -> None:
    old = Storage(tmp_path)
    old.create_job("job_old", "rl", "replay", {"metadata": {"task_app_api_key": SECRET}})  # as before masking
    old.close()
    Storage(tmp_path).close()
    assert SECRET.encode() not in _bytes_under(tmp_path)
    reopened = Storage(tmp_path)
    job = reopened.get_job("job_old")
    reopened.close()
    assert job is not None and job.body["metadata"]["task_app_api_key"] == f"••••{SECRET[-4:]}"


def test_a_queued_job_started_after_a_restart_says_its_key_was_not_kept(tmp_path: Path) -> None:
    def connect(running) -> httpx.Client:
        return httpx.Client(base_url=running.api_url, headers={"Authorization": f"Bearer {API_KEY}"},
                            trust_env=False)

    with start_backend(data_dir=tmp_path, api_key=API_KEY, environment_api_key="sk_env_backend_own_key_01") as first, \
            connect(first) as client:
        upload = client.post("/files", files={"file": ("t.jsonl", b"{}\n")}, data={"purpose": "fine-tune"}).json()
        body = {"model": "m", "training_file_id": upload["id"], "metadata": {"task_app_api_key": SECRET}}
        job_id = client.post("/learning/jobs", json=body).json()["job_id"]  # SFT jobs wait to be started
        assert client.get(f"/learning/jobs/{job_id}").json()["status"] == "queued"
    with start_backend(data_dir=tmp_path, api_key=API_KEY, environment_api_key="sk_env_backend_own_key_01") as again, \
            connect(again) as client:
        client.post(f"/learning/jobs/{job_id}/start")
        done = wait_terminal(client, f"/learning/jobs/{job_id}")
        events = client.get(f"/learning/jobs/{job_id}/events").json()["events"]
    assert done["status"] == "succeeded" and done["key_digest"] is None and done["env_key_seen"] is True
    warning = next(e for e in events if e["type"] == "job.secrets.unavailable")
    assert warning["level"] == "warning" and "lost when the backend restarted" in warning["message"]


@pytest.mark.parametrize("name", ["auth", "authorization", "api_key_header", "credentials", "credential", "bearer",
                                  "passwd", "client-auth", "cookie", "private_key"])
def test_secrets_under_other_names_are_withheld_too(name: str) -> None:
    from synth_nb.local.redact import restore_secrets, withhold_secrets

    body = {"config_body": {"policy": {"headers": {name: SECRET}, "max_tokens": 64, "author": "me"}}}
    stored, withheld = withhold_secrets(body)
    assert SECRET not in json.dumps(stored) and stored["config_body"]["policy"]["headers"][name].endswith(SECRET[-4:])
    assert stored["config_body"]["policy"]["max_tokens"] == 64 and stored["config_body"]["policy"]["author"] == "me"
    assert restore_secrets(stored, withheld) == body
