"""Canary keys planted everywhere a secret can come from appear in no client-side artefact.

The keys are put in the environment, in a config (``task_app_api_key``) and in a backend URL's credentials,
and the in-test backend is careless on purpose: an event repeats the create body (with the task-app key)
and the request's Authorization header. Then every artefact is scanned: stdout, stderr and logs (at DEBUG,
httpx's included), the job registry, ``--record`` files, results folders and summaries, a notebook run
headless and saved, and the ``repr``/``str`` of every public object. At most a masked tail may show.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from minimal_configs import MINIMAL_GEPA

SYNTH = "sk_synth_CANARY_scan_0123456789abcdef"
ENV = "sk_env_CANARY_scan_fedcba9876543210"
INLINE = "sk_inline_CANARY_scan_55aa55aa55aa55aa"
URL_PASSWORD = "pw_CANARY_url"
CANARIES = (SYNTH, ENV, INLINE, URL_PASSWORD, "CANARY_scan", "CANARY_url")


def _leaks(text: str) -> list[str]:
    return [c for c in CANARIES if c in text]


def _files(folder: Path) -> Iterator[tuple[Path, str]]:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            yield path, path.read_bytes().decode("utf-8", "replace")


@pytest.fixture()
def careless_backend(fake_backend):  # type: ignore[no-untyped-def]
    fake_backend.state.api_key = SYNTH
    fake_backend.state.echo = True
    return fake_backend


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SYNTH_API_KEY", SYNTH)
    monkeypatch.setenv("ENVIRONMENT_API_KEY", ENV)
    monkeypatch.setenv("SYNTH_SKIP_TASK_APP_HEALTH_CHECK", "1")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pl.toml").write_text(MINIMAL_GEPA)
    return tmp_path


def test_a_cli_run_attach_and_listing_leave_no_secret(careless_backend, project: Path,  # type: ignore[no-untyped-def]
                                                      capsys: pytest.CaptureFixture[str],
                                                      caplog: pytest.LogCaptureFixture) -> None:
    from synth_nb.cli.main import main

    caplog.set_level(logging.DEBUG)
    assert main(["train", "--config", "pl.toml", "--backend", careless_backend.url, "--record", "run.jsonl",
                 "--poll-interval", "0.5"]) == 0
    (job_id,) = careless_backend.state.jobs
    assert main(["attach", job_id, "--backend", careless_backend.url]) == 0
    assert main(["jobs"]) == 0
    assert main(["train", "--config", "pl.toml", "--backend", careless_backend.url, "--dry-run"]) == 0
    assert main(["train", "--config", "pl.toml", "--backend", careless_backend.url, "--dry-run", "--json"]) == 0
    out, err = capsys.readouterr()
    echoed = [e for e in careless_backend.state.jobs[job_id].events if e["type"].endswith(".debug")]
    assert ENV in echoed[0]["message"] and SYNTH in echoed[0]["message"]  # the backend did echo them
    assert "debug" in Path("run.jsonl").read_text()  # and the client kept that event
    assert not _leaks(out) and not _leaks(err) and not _leaks(caplog.text)
    written = dict(_files(project))
    assert any(p.name == "jobs.json" for p in written) and any(p.name == "summary.md" for p in written)
    assert {str(p): _leaks(text) for p, text in written.items() if _leaks(text)} == {}


def test_a_saved_notebook_holds_no_secret(careless_backend, project: Path) -> None:  # type: ignore[no-untyped-def]
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (
        "%load_ext synth_nb",
        f"job = %synth_train --config pl.toml --backend {careless_backend.url} --yes --wait --poll-interval 0.5",
        "job", "print(job, job.events[-3:], job.status_doc)", "job.events_df()",
        f"%synth_train --config pl.toml --backend {careless_backend.url} --dry-run",
        "%synth_train --jobs",
        # re-attached, the job holds the echoed events again: masked with the keys resolved in the kernel
        f"again = %synth_train --attach {{job.id}} --backend {careless_backend.url}",
        "print(again.events[-3:], again.status_doc); again.events_df()",
    )]
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(project)}}
                   ).execute(env=env)
    saved = project / "run.ipynb"
    nbformat.write(nb, saved)
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"], outputs
    assert "debug" in saved.read_text()
    assert {str(p): _leaks(text) for p, text in _files(project) if _leaks(text)} == {}


def _public_objects(folder: Path) -> Iterator[object]:
    """One of each public object, built from canary-bearing inputs."""
    from synth_nb import pipeline
    from synth_nb.client import AsyncSynthClient, SynthClient
    from synth_nb.config import load_config
    from synth_nb.flows import get_flow
    from synth_nb.job import Job, JobRegistry, Recorder
    from synth_nb.pipeline.request import Request
    from synth_nb.secrets import resolve_secrets

    url = f"http://user:{URL_PASSWORD}@127.0.0.1:9"
    config = folder / "inline.toml"
    config.write_text(MINIMAL_GEPA.replace('results_folder = "results"',
                                           f'results_folder = "results"\ntask_app_api_key = "{INLINE}"'))
    loaded = load_config(config)
    yield from (loaded, loaded.model)
    bundle = resolve_secrets(environ={"SYNTH_API_KEY": SYNTH, "ENVIRONMENT_API_KEY": ENV}, cwd=folder)
    yield from (bundle, *bundle, *bundle.values())
    target = pipeline.resolve_target(url, start_local=False)
    prepared = pipeline.prepare_config(config, overrides=pipeline.build_overrides({}, target), target=target,
                                sources=pipeline.SecretSources(environ={"SYNTH_API_KEY": SYNTH, "ENVIRONMENT_API_KEY": ENV},
                                                                 cwd=folder))
    assert prepared.plan is not None, prepared.error
    yield from (target, prepared, prepared.plan, *prepared.plan.steps, prepared.plan.task_app)
    client = AsyncSynthClient(url, SYNTH)
    job = Job("pl_canary", "prompt_learning", client, endpoints=get_flow("prompt_learning").endpoints)
    yield from (client, job, Request(folder), JobRegistry(folder), Recorder(folder / "r.jsonl", secrets=[SYNTH]))
    sync = SynthClient(url, SYNTH)
    try:
        yield sync
    finally:
        sync.close()


def test_no_public_object_shows_a_secret_in_its_repr(tmp_path: Path) -> None:
    from synth_nb.local import start_backend

    shown = {f"{type(obj).__name__}": repr(obj) + str(obj) for obj in _public_objects(tmp_path)}
    with start_backend(api_key=SYNTH) as backend:
        shown["LocalBackend"] = repr(backend) + str(backend)
    assert len(shown) >= 12
    assert {name: _leaks(text) for name, text in shown.items() if _leaks(text)} == {}


def test_a_job_masks_what_the_backend_echoes_before_holding_it() -> None:
    from synth_nb.client import AsyncSynthClient, EventRecord
    from synth_nb.flows import get_flow
    from synth_nb.job import Job
    from synth_nb.records import Event

    job = Job("pl_echo", "prompt_learning", AsyncSynthClient("http://127.0.0.1:9", SYNTH),
              endpoints=get_flow("prompt_learning").endpoints, hidden=[ENV])
    job.ingest_event(Event(seq=1, type="pl.debug", message=f"key {ENV}", data={"auth": f"Bearer {SYNTH}"}))
    # a page, as the monitor hands them over: one echo among clean events
    page = [EventRecord.of(Event(seq=seq, type="pl.progress", message=f"step {seq}")) for seq in range(2, 40)]
    page[17] = EventRecord.of(Event(seq=19, type="pl.debug", message=f"retrying with {SYNTH}"))
    assert job.ingest_events(page) == len(page)
    job.ingest_status({"status": "failed", "error": f"task app refused {ENV}"})
    shown = repr(list(job.events)) + repr(job.status_doc) + job.events_df().to_csv()
    assert not _leaks(shown) and "••••" in shown and "step 39" in shown
