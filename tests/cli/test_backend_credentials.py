"""Credentials in a backend URL (``http://user:PASSWORD@host``) are sent, and shown or stored nowhere."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from minimal_configs import MINIMAL_GEPA, MINIMAL_SFT

from synth_nb.backend import display_url, resolve_backend
from synth_nb.cli.main import main
from synth_nb.client import AsyncSynthClient
from synth_nb.errors import AuthError, NetworkError, OverrideError
from synth_nb.flows import get_flow
from synth_nb.job import JobRegistry, submit
from synth_nb.pipeline import attach_target, resolve_target
from synth_nb.plan import Plan, Step

PASSWORD = "pw9"  # short on purpose: no tail of it may show
USER = "proxyuser"
URL = f"http://{USER}:{PASSWORD}@127.0.0.1:9"


def _leaks(text: str) -> bool:
    return f"{USER}:{PASSWORD}" in text or f":{PASSWORD}@" in text or USER in text


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("SYNTH_BACKEND_OVERRIDE", raising=False)
    monkeypatch.setenv("SYNTH_API_KEY", "sk_synth_cred_0123456789abcdef")
    monkeypatch.setenv("ENVIRONMENT_API_KEY", "sk_env_cred_0123456789abcdef")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pl.toml").write_text(MINIMAL_GEPA)
    return tmp_path


@pytest.mark.parametrize("as_json", [False, True])
def test_the_dry_run_masks_the_credentials(folder: Path, as_json: bool, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["train", "--config", "pl.toml", "--backend", URL, "--dry-run", *(["--json"] if as_json else [])]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert not _leaks(out + err), out
    assert "http://••••@127.0.0.1:9/api" in out


def test_a_bad_url_with_credentials_is_refused_without_them(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--config", "pl.toml", "--backend", f"http://{USER}:{PASSWORD}@exa mple.com",
                 "--dry-run"]) == 2
    assert not _leaks(capsys.readouterr().err)


async def test_client_repr_and_network_errors_hide_them() -> None:
    client = AsyncSynthClient(URL, "sk_key_0123456789abcdef", max_attempts=1)
    try:
        assert not _leaks(repr(client)) and client.shown_url == "http://••••@127.0.0.1:9/api"
        with pytest.raises(NetworkError) as err:
            await client.request_json("GET", "/rl/jobs")
        assert not _leaks(str(err.value)) and not _leaks(repr(err.value))
    finally:
        await client.aclose()


async def test_they_are_sent_and_error_answers_hide_them() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization", ""))
        return httpx.Response(401, json={"detail": "no"})

    async with AsyncSynthClient(URL, "k", transport=httpx.MockTransport(handler), max_attempts=1) as client:
        with pytest.raises(AuthError) as err:
            await client.request_json("GET", "/rl/jobs")
    assert seen and seen[0].startswith("Basic ")  # httpx sends URL credentials as basic auth
    assert not _leaks(str(err.value)) and not _leaks(err.value.url)


async def test_the_registry_job_and_recording_keep_no_credentials(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(201, json={"id": "job_cred", "status": "queued"})

    registry = JobRegistry(tmp_path)
    plan = Plan(flow="sft", endpoints=get_flow("sft").endpoints,
                algorithm=None, steps=[Step("POST", "/learning/jobs", {"model": "m"})])
    client = AsyncSynthClient(URL, "k", transport=httpx.MockTransport(handler))
    job = await submit(plan, client, registry=registry)
    await client.aclose()
    stored = registry.path.read_text()
    assert "job_cred" in stored and not _leaks(stored)
    assert not _leaks(job.backend_url) and not _leaks(repr(job))
    assert json.loads(stored)["jobs"][0]["backend_url"] == display_url(resolve_backend(URL))
    with pytest.raises(OverrideError, match="--backend"):  # attaching from the registry asks for the URL again
        attach_target("job_cred", None, registry, start_local=False)
    assert not _leaks(repr(resolve_target(URL)))


def test_sft_preview_masks_them_too(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "sft.toml").write_text(MINIMAL_SFT)
    (folder / "train.jsonl").write_text('{"messages": [{"role": "user", "content": "a"}, '
                                        '{"role": "assistant", "content": "b"}]}\n')
    assert main(["train", "--config", "sft.toml", "--backend", URL, "--dry-run"]) == 0
    assert not _leaks(capsys.readouterr().out)
