"""``synth-nb cancel JOB_ID`` sends the cancel as soon as the job is found, never after reading its history.

A running job with a long history (a replayed recording: thousands of events at once, then an end an hour
later) on the real embedded backend, whose requests are seen in order by a small ASGI wrapper: the command
finds the job by a status read, sends the cancel, confirms it by status reads and asks for no events page;
a second cancel of the ended job sends nothing.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from synth_nb.cli.main import main

EVENTS = 3000
HANG = 120.0  # reached only when something hangs


class Requests:
    """Pure ASGI: remembers each HTTP request's method and path, in the order they came."""

    def __init__(self, app: Any) -> None:
        self.app, self.seen = app, []  # type: ignore[var-annotated]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append((scope["method"], scope["path"]))
        await self.app(scope, receive, send)


def _long_recording(path: Path) -> None:
    lines = [{"t": 0.0, "kind": "status", "payload": {"status": "running"}}]
    lines += [{"t": 0.0, "kind": "event", "payload": {"type": "sft.progress", "level": "info",
                                                     "message": f"step {i}", "data": {"step": i}}}
              for i in range(EVENTS)]
    lines.append({"t": 3600.0, "kind": "status", "payload": {"status": "succeeded"}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.fixture
def seen_backend(tmp_path: Path) -> Iterator[tuple[Any, Requests]]:
    from synth_nb.local import start_backend

    data = tmp_path / "data"
    _long_recording(data / "recordings" / "long.jsonl")
    holder: list[Requests] = []

    def wrap(app: Any) -> Requests:
        holder.append(Requests(app))
        return holder[0]

    with start_backend(port=0, data_dir=data, default_executor="replay") as backend:
        backend.app.add_middleware(wrap)  # before its first request: outermost, sees every request
        yield backend, holder


def _long_job(backend: Any) -> str:
    with httpx.Client(base_url=backend.api_url, headers={"Authorization": f"Bearer {backend.api_key}"},
                      timeout=30, trust_env=False) as http:
        job = http.post("/learning/jobs", json={"metadata": {"local_executor": "replay",
                                                             "recording": "long.jsonl"}}).json()
        http.post(f"/learning/jobs/{job['id']}/start")
        deadline = time.monotonic() + HANG
        while (http.get(f"/learning/jobs/{job['id']}").json().get("last_seq") or 0) < EVENTS:
            assert time.monotonic() < deadline, "the replay never stored its events"
            time.sleep(0.05)
        assert http.get(f"/learning/jobs/{job['id']}").json()["status"] == "running"
    return str(job["id"])


@pytest.mark.parametrize("transport", ["standard library", "httpx"])
def test_cancel_is_sent_before_any_events_page_and_confirmed_by_status_reads(
        transport: str, seen_backend: tuple[Any, list[Requests]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Over the blocking ``PlainClient``, and over httpx as when a proxy is named for the backend."""
    if transport == "httpx":
        from synth_nb.client import PlainClient

        monkeypatch.setattr(PlainClient, "serves", staticmethod(lambda url, environ=None: False))
    backend, holder = seen_backend
    job_id = _long_job(backend)
    seen = holder[0].seen
    before = len(seen)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
    monkeypatch.delenv("SYNTH_BACKEND_OVERRIDE", raising=False)
    code = main(["cancel", job_id, "--backend", backend.url, "--timeout", str(HANG)])
    out = capsys.readouterr().out
    assert (code, out.strip()) == (0, f"job {job_id}: cancelled")
    asked = [(method, path) for method, path in seen[before:] if job_id in path]
    cancels = [i for i, (method, path) in enumerate(asked) if method == "POST" and path.endswith("/cancel")]
    assert len(cancels) == 1, asked
    assert [a for a in asked if "/events" in a[1] or "/metrics" in a[1]] == [], asked  # no history read
    assert all(method == "GET" for method, _ in asked[:cancels[0]]), asked  # found by status reads only
    again = len(seen)
    assert main(["cancel", job_id, "--backend", backend.url]) == 0  # it has ended: said, nothing sent
    assert capsys.readouterr().out.strip() == f"job {job_id}: cancelled"
    assert {method for method, path in seen[again:] if job_id in path} == {"GET"}  # status reads only


@pytest.mark.parametrize("own_env_file", [False, True])
def test_the_cancel_keys_are_those_the_request_resolves(own_env_file: bool, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``synth-nb cancel`` resolves its keys without the pydantic bundle: the same key sent and the same values
    masked (a comma list's parts included) as ``attachment`` finds through the request's secret sources."""
    from synth_nb.pipeline.attaching import attachment, cancel_attachment
    from synth_nb.pipeline.request import Request

    monkeypatch.chdir(tmp_path)
    for name in ("SYNTH_API_KEY", "SYNTH_BACKEND_OVERRIDE", "ENVIRONMENT_API_KEY", "ENVIRONMENT_API_KEY_ALIASES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SYNTH_NB_BACKEND_DIR", str(tmp_path / "no-backend"))
    monkeypatch.setenv("ENVIRONMENT_API_KEY", "sk_env_from_environment_0123")
    (tmp_path / ".env").write_text("SYNTH_API_KEY=sk_synth_from_dotenv_0123456789\n"
                                   "ENVIRONMENT_API_KEY=sk_env_from_dotenv_0123\n"
                                   "ENVIRONMENT_API_KEY_ALIASES=sk_alias_one_0123,sk_alias_two_4567\n")
    (tmp_path / "own.env").write_text("SYNTH_API_KEY=sk_synth_from_env_file_0123456789\n")
    env_files = ["own.env"] if own_env_file else []
    url = "http://127.0.0.1:9"  # nothing is asked of it
    lean = cancel_attachment("pl_x", backend=url, flow=None, folder=tmp_path, env_files=env_files)
    args = argparse.Namespace(backend=url, env_files=env_files, modal_secrets=None, flow=None)
    full = attachment(Request.from_args(args, tmp_path, anchor=False), "pl_x", start_local=False)
    assert lean.key == full.key == ("sk_synth_from_env_file_0123456789" if own_env_file
                                    else "sk_synth_from_dotenv_0123456789")
    assert set(lean.hidden) == set(full.hidden) >= {"sk_env_from_environment_0123", "sk_alias_one_0123"}
    assert lean.target == full.target
