"""The monitor panel's "budget left" meter: part of its status output, so a saved notebook keeps it."""

from __future__ import annotations

import asyncio

import nbformat
import pytest
from _display_capture import capture_display
from _fake_job import FakeJob

from synth_nb.job.budget import Limits
from synth_nb.job.watchdog import Watchdog
from synth_nb.notebook.panel import MonitorPanel
from synth_nb.pipeline.request import Request


@pytest.fixture()
def outputs(monkeypatch):  # type: ignore[no-untyped-def]
    return capture_display(monkeypatch)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_the_meter_shows_what_is_left_and_which_limit_stopped_the_job(outputs) -> None:  # type: ignore[no-untyped-def]
    job = FakeJob("prompt_learning", job_id="pl_budget1", algorithm="gepa")
    job.loop = asyncio.get_running_loop()
    clock = Clock()
    Watchdog(job, Limits(max_minutes=10, max_rollouts=60, max_tokens=5000), clock=clock).start()
    panel = MonitorPanel(job, tick=0.01).display()
    status = outputs[0]
    clock.now += 90
    job.event("prompt.learning.progress", rollouts_completed=40)
    panel.render_status(force=True)
    html, text = status.last["text/html"], status.last["text/plain"]
    assert "data-testid='budget'" in html and "aria-label='budget left'" in html
    assert "<meter min='0' max='60' value='40'" in html
    assert "rollouts: 40 of 60 used, 20 left" in text
    assert "time: 1 min 30 s of 10 min 00 s used, 8 min 30 s left" in text  # a duration, never "1.5 minutes"
    assert "--max-tokens 5000: not reported by the backend so far" in text

    job.event("prompt.learning.progress", rollouts_completed=64, best_score=0.8)  # crosses the limit
    final = await asyncio.wait_for(panel.wait(), 30)
    assert final == "cancelled" and job.cancel_calls == 1
    clock.now += 600  # the job has ended: its time no longer runs
    panel.render_status(force=True)
    html, text = status.last["text/html"], status.last["text/plain"]
    assert "rollouts: 64 of 60 used, 0 left" in text and "time: 1 min 30 s of 10 min 00 s used" in text
    # why it stopped: once, on the status line (the job's one stop reason), the meter marks the limit crossed
    assert text.count("stopped by --max-rollouts 60: 64 rollouts (limit 60); cancel: cancelled") == 1
    assert "data-limit='rollouts' data-crossed='true'" in html
    assert "<div class='synth-note'>stopped by --max-rollouts 60: 64 rollouts (limit 60); cancel: cancelled" in html

    # a plain display output: the saved notebook holds the meter as it was last drawn
    cell = nbformat.v4.new_code_cell("job", outputs=[nbformat.v4.new_output("display_data", data=status.last)])
    saved = nbformat.writes(nbformat.v4.new_notebook(cells=[cell]))
    reopened = nbformat.reads(saved, as_version=4).cells[0].outputs[0]["data"]
    assert "rollouts: 64 of 60 used, 0 left" in reopened["text/plain"] and "data-testid='budget'" in reopened["text/html"]


async def test_a_job_without_limits_has_no_meter(outputs) -> None:  # type: ignore[no-untyped-def]
    job = FakeJob("sft")
    panel = MonitorPanel(job, tick=0.01).display()
    job.finish("succeeded")
    await asyncio.wait_for(panel.wait(), 30)
    assert "budget" not in outputs[0].last["text/html"] and "budget left" not in outputs[0].last["text/plain"]


async def test_jobs_submitted_from_the_wizard_get_the_limits_of_the_magic(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from _wizard_support import clean_environ, make_project, tick

    from synth_nb.notebook.wizard import Wizard
    from synth_nb.pipeline import actions

    job = FakeJob("prompt_learning", job_id="pl_wizard1", algorithm="gepa")
    job.watchdog = None  # type: ignore[attr-defined]

    async def fake_send(batch, request, **_):  # type: ignore[no-untyped-def]
        return [job]  # the follow stage then watches it with the request's limits

    monkeypatch.setattr(actions, "send", fake_send)
    folder = make_project(tmp_path / "nb")
    wizard = tick(Wizard(folder, environ=clean_environ(), on_submitted=lambda jobs: None,
                         request=Request(folder, limits={"max_rollouts": 60})), "gepa.toml")
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert wizard.submit_task is not None
    await wizard.submit_task
    meters = job.watchdog.meters()  # type: ignore[attr-defined]
    assert [(m.flag, m.limit) for m in meters] == [("--max-rollouts", 60)]


async def test_a_job_the_backend_stopped_at_the_limit_is_reported_once_and_not_cancelled(outputs) -> None:  # type: ignore[no-untyped-def]
    """``--max-rollouts`` travels in the job body: the backend ends the search at it, the watchdog cancels
    nothing and the panel names the limit with the job's own count."""
    job = FakeJob("prompt_learning", job_id="pl_budget2", algorithm="gepa")
    job.loop = asyncio.get_running_loop()
    Watchdog(job, Limits(max_rollouts=60)).start()
    panel = MonitorPanel(job, tick=0.01).display()
    status = outputs[0]
    job.event("prompt.learning.progress", rollouts_completed=56, rollouts_total=60, best_score=0.7)
    job.event("prompt.learning.completed", finish_reason="budget_exhausted", rollouts_completed=56)
    job.finish("succeeded", best_score=0.7, best_prompt={"sections": []})
    assert await asyncio.wait_for(panel.wait(), 30) == "succeeded" and job.cancel_calls == 0
    panel.render_status(force=True)
    text, html = status.last["text/plain"], status.last["text/html"]
    assert "rollouts: 56 of 60 used, 4 left" in text
    assert text.count("stopped by --max-rollouts 60") == 1
    assert "stopped by --max-rollouts 60: 56 rollouts (limit 60); the backend ended the search at the limit " \
           "(budget_exhausted); the best prompt the backend reports is kept" in text
    assert "<div class='synth-note'>stopped by --max-rollouts 60: 56 rollouts (limit 60)" in html
    assert job.watchdog.stopped_by()["by"] == "backend"  # type: ignore[attr-defined]
