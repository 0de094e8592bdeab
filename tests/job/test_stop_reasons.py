"""One stop reason for every way a job ends (``synth_nb.job.ending``), on real jobs where a backend can end
them so: cancelled from here or by another client, watched past ``--poll-timeout``; lost contact and a
failure's reason from what the job holds. (The budget, a plateau, a limit, max_steps and the hosted shapes
are held in ``test_watchdog``, ``test_rollout_budget``, ``tests/cli/test_final_block_terminal`` and
``tests/replay``.)"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from minimal_configs import LOCAL_GEPA

from synth_nb import pipeline
from synth_nb.backend import normalize_backend_url
from synth_nb.cli.main import main
from synth_nb.job import JobRegistry
from synth_nb.job.ending import ending_of, stop_reason
from synth_nb.pipeline import SecretSources, Target
from synth_nb.records import Event

WAIT = 300  # a guard against a hang, not a speed check


def _plan(folder: Path, task_app: Any, target: Target, key: str) -> Any:
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=3000))
    sources = SecretSources(environ={"ENVIRONMENT_API_KEY": task_app.api_key, "SYNTH_API_KEY": key}, cwd=folder)
    prepared = pipeline.prepare_config(folder / "gepa.toml", overrides=pipeline.build_overrides({}, target),
                                       target=target, sources=sources)
    assert prepared.plan is not None, prepared.error
    return prepared.plan


def test_a_cancel_says_who_sent_it(signed_in_folder: Path, backend: Any, task_app: Any) -> None:
    """The handle that sent the cancel says "this command"; another following the same job says it was cancelled
    elsewhere; the registry keeps one of them for the job list."""
    target = Target(normalize_backend_url(backend.url))
    registry = JobRegistry(signed_in_folder)

    async def run() -> tuple[str, str, str]:
        job = await pipeline.submit_plan(_plan(signed_in_folder, task_app, target, backend.api_key), target, backend.api_key,
                                         registry=registry, poll_interval=0.2)
        watcher = await pipeline.rebuild_job(job.id, target, backend.api_key, registry=registry, poll_interval=0.2)
        watching = asyncio.ensure_future(watcher.wait(timeout=WAIT))
        try:
            assert await job.cancel(timeout=WAIT) == "cancelled"
            await watching
            return job.id, job.ending().stop.text, watcher.ending().stop.text
        finally:
            await job.client.aclose()
            await watcher.client.aclose()

    job_id, here, elsewhere = asyncio.run(run())
    assert here == "cancelled by this command"
    assert elsewhere == "cancelled by another client or on the backend (not from here)"
    record = registry.get(job_id)
    assert record is not None and record.stop_reason in (here, elsewhere)  # recorded by whichever saw the end last


def test_a_watch_that_ends_at_poll_timeout_says_the_job_still_runs(signed_in_folder: Path, backend: Any,
                                                                   task_app: Any,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (signed_in_folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=100000))
    assert main(["train", "gepa.toml", "--backend", backend.url, "--yes", "--poll-timeout", "1"]) == 1
    out = capsys.readouterr().out
    job_id = re.search(r"submitted prompt_learning job (pl_\w+)", out).group(1)  # type: ignore[union-attr]
    stopped = next(line for line in out.splitlines() if line.startswith("  stopped:  "))
    assert re.fullmatch(r"  stopped:  still (running|queued): stopped watching after 1\.0 s \(--poll-timeout\); "
                        r"the job keeps running", stopped), out
    assert main(["cancel", job_id, "--backend", backend.url]) == 0


def _held(status: str, events: list[Event] = (), **extra: Any) -> Any:  # type: ignore[assignment]
    return SimpleNamespace(id="pl_held", flow="prompt_learning", status=status, status_doc={"status": status},
                           events=list(events), metrics=[], **extra)


def test_lost_contact_and_a_failure_are_said_in_one_line() -> None:
    lost = _held("running", follow_error="the backend refused the API key (401 on GET /prompt-learning/online/jobs)")
    assert stop_reason(lost).text == ("lost contact while it was running: the backend refused the API key (401 on "
                                      "GET /prompt-learning/online/jobs); it may still be running "
                                      "(synth-nb attach pl_held)")
    trace = "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: bad seed 9"
    failed = _held("failed", [Event(seq=1, type="prompt.learning.failed", level="error", message=trace,
                                    data={"error": trace})])
    reason = stop_reason(failed)
    assert reason.kind == "failed" and "\n" not in reason.text
    assert reason.text.startswith("failed: Traceback (most recent call last): File") and "bad seed 9" in reason.text
    assert ending_of(_held("succeeded")).stop.text == "succeeded (the backend gave no reason)"
