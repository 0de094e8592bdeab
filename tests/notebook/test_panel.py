"""MonitorPanel against a fake job: live task on the loop, final state, cancel, artifacts, headless wait."""

from __future__ import annotations

import asyncio
import base64

import pytest
from _display_capture import capture_display
from _fake_job import FakeJob

from synth_nb.notebook import live_output
from synth_nb.notebook import panel as panel_mod
from synth_nb.notebook.panel import MonitorPanel
from synth_nb.notebook.show import show_job


@pytest.fixture(autouse=True)
def _front_end(monkeypatch):
    """These panels are drawn by a front end (buttons and all); ``test_headless_output`` has the headless ones."""
    monkeypatch.setenv("SYNTH_NB_WIDGETS", "1")


@pytest.fixture()
def outputs(monkeypatch):
    """The cell's outputs in display order: status, chart, controls widget, summary (per panel)."""
    return capture_display(monkeypatch)


def _sft_history(job: FakeJob, steps: int = 20) -> None:
    job.event("sft.created")
    job.event("sft.training.started", "training", total_steps=steps)
    for s in range(1, steps + 1):
        job.metric("train.loss", s, 2.0 / s)
        job.event("sft.worker.alive")
    job.event("sft.training.step", step=steps, total_steps=steps)


async def test_panel_follows_job_to_the_end_and_leaves_chart_status_and_artifacts(outputs) -> None:
    job = FakeJob("sft")
    _sft_history(job)
    panel = MonitorPanel(job, tick=0.01).display()
    status, chart, controls, artifacts = outputs
    job.metric("val.loss", 20, 0.5)
    job.finish("succeeded", fine_tuned_model="ft:qwen:abc", training_file="file_123")
    final = await asyncio.wait_for(panel.wait(), 60)
    assert final == "succeeded" and job.monitoring_started == 1
    assert "data-status='succeeded'" in status.last["text/html"]
    assert "20/20 steps" in status.last["text/plain"]
    assert "21 routine hidden" in status.last["text/html"]  # sft.created + 20 worker.alive
    assert base64.b64decode(chart.last["image/png"]).startswith(b"\x89PNG")
    assert "validation loss" in chart.last["text/plain"]
    assert "ft:qwen:abc" in artifacts.last["text/markdown"] and "file_123" in artifacts.last["text/markdown"]
    assert panel.controls is not None and panel.controls.cancel.disabled
    live = controls.shown[0]
    assert live["application/vnd.jupyter.widget-view+json"]["model_id"] == panel.controls.widget.model_id
    assert live["text/plain"] == ""  # a saved notebook shows no widget repr in place of the buttons
    # nothing is left to press: the row became static text, so a saved notebook
    # reopened without this kernel shows its last state, not "Error displaying widget"
    assert "application/vnd.jupyter.widget-view+json" not in controls.last
    # one line: the status and why it stopped, never the buttons' states ("Job finished: off" read as "the
    # job did not finish")
    assert controls.last["text/plain"] == ("Job job_test123 succeeded: it ran all its planned training steps "
                                           "(max_steps: 20 of 20 steps).")
    assert "Job finished" not in controls.last["text/html"] and "not pressed" not in controls.last["text/html"]


async def test_a_kernel_stopping_mid_job_leaves_a_row_that_says_how_to_follow_the_job_again(outputs) -> None:
    live_output._LIVE.clear()  # only this panel's outputs are live
    job = FakeJob("sft")
    _sft_history(job, steps=3)
    panel = MonitorPanel(job, tick=0.01).display()
    status, _chart, controls, _summary = outputs
    await asyncio.sleep(0.05)
    panel.render_status(force=True)
    assert "ETA" in status.last["text/plain"]
    live_output.freeze_all()  # what the kernel's shutdown_request does first
    assert "application/vnd.jupyter.widget-view+json" not in controls.last
    head = controls.last["text/plain"].splitlines()[0]
    assert head == ("The kernel that followed job job_test123 stopped while the job was running: this panel no "
                    "longer updates. The job may still run; re-attach from a kernel: %synth_train --attach job_test123")
    assert "  Cancel job: on" in controls.last["text/plain"]
    assert "unknown (last seen running)" in status.last["text/html"] and "ETA" not in status.last["text/plain"]
    panel.render_status(force=True)  # a refresh before the kernel is gone keeps saying so
    assert "status=unknown (last seen running)" in status.last["text/plain"]
    job.finish("succeeded")
    await asyncio.wait_for(panel.wait(), 60)


def test_the_fake_job_is_a_job_view() -> None:
    from synth_nb.job import JobView

    assert isinstance(FakeJob(), JobView)


async def test_live_updates_redraw_while_other_work_runs(outputs) -> None:
    job = FakeJob("rl")
    panel = MonitorPanel(job, tick=0.01).display()
    chart = outputs[1]
    ticks = 0
    for step in range(1, 6):
        job.metric("train.reward_mean", step, step / 10)
        for _ in range(3):
            await asyncio.sleep(0.02)
            ticks += 1
    await asyncio.sleep(0.6)  # past the 0.5 s rate limit
    job.finish()
    await asyncio.wait_for(panel.wait(), 60)
    assert ticks == 15
    assert len(chart.shown) >= 3  # initial frame, live redraw(s), final frame


async def test_long_history_yields_to_other_tasks(outputs) -> None:
    job = FakeJob("sft")
    for s in range(3000):
        job.metric("train.loss", s, 1.0)
    job.finish()
    progressed = 0

    async def other_cell() -> None:
        nonlocal progressed
        while True:
            progressed += 1
            await asyncio.sleep(0)

    other = asyncio.create_task(other_cell())
    panel = MonitorPanel(job, tick=0.01).display()
    await asyncio.wait_for(panel.wait(), 60)
    other.cancel()
    assert progressed > 3  # consumer paused every 500 updates
    assert panel.chart.point_count == 3000


async def test_show_all_toggle_and_error_highlight(outputs) -> None:
    job = FakeJob("prompt_learning", algorithm="mipro")
    job.event("mipro.tpe.update")
    job.event("prompt.learning.trial.results", "trial 1", mean=0.4)
    job.event("mipro.worker.failed", "worker crashed", level="error")
    panel = MonitorPanel(job, tick=0.01).display()
    status, _, controls, _ = outputs
    await asyncio.sleep(0.05)
    panel.render_status(force=True)
    assert "mipro.tpe.update" not in status.last["text/html"]
    assert "class='synth-err'" in status.last["text/html"]
    assert panel.controls is not None
    assert controls.last["application/vnd.jupyter.widget-view+json"]["model_id"] == panel.controls.widget.model_id
    assert controls.last["text/plain"] == ""  # a saved notebook shows no widget repr in place of the buttons
    panel.controls.show_all.value = True  # the show-all toggle, as displayed
    assert "mipro.tpe.update" in status.last["text/html"]
    job.finish("failed")
    assert await asyncio.wait_for(panel.wait(), 60) == "failed"
    # nothing is left to press once the job ended: the row is text
    assert "application/vnd.jupyter.widget-view+json" not in controls.last


async def test_cancel_asks_to_confirm_then_sends_backend_cancel_and_shows_confirmed_state(outputs) -> None:
    job = FakeJob("rl")
    panel = MonitorPanel(job, tick=0.01).display()
    status, _, _, summary = outputs
    controls = panel.controls
    assert controls is not None
    controls.cancel.click()
    await asyncio.sleep(0.05)
    assert job.cancel_calls == 0 and controls.confirming  # nothing is sent before the confirmation
    controls.keep.click()
    assert not controls.confirming and not controls.cancel.disabled
    controls.cancel.click()
    controls.message._front_end_message(None, {"event": "focus", "held": True}, [])  # Cancel pressed by keyboard
    controls.confirm.click()
    final = await asyncio.wait_for(panel.wait(), 60)
    assert final == "cancelled" and job.cancel_calls == 1
    assert "cancelled by the panel's Cancel button" in status.last["text/plain"]
    assert "RL result: job_test123 (cancelled)" in summary.last["text/plain"]
    assert '"status": "cancelled"' in summary.last["text/plain"]
    # the row holds the focus Cancel left in it: it stays live until the front end says the focus has left
    assert controls.holds_focus
    row = outputs[2]
    assert "application/vnd.jupyter.widget-view+json" in row.last and controls.message.release_when_unfocused
    controls.message._front_end_message(None, {"event": "unfocused"}, [])
    for _ in range(500):
        if "application/vnd.jupyter.widget-view+json" not in row.last:
            break
        await asyncio.sleep(0.02)
    assert row.last["text/plain"] == "Job job_test123 cancelled by the panel's Cancel button."


async def test_a_cancel_from_code_leaves_a_row_without_the_focus_as_text_at_once(outputs) -> None:
    job = FakeJob("sft")
    panel = MonitorPanel(job, tick=0.01).display()
    panel.start()
    assert await asyncio.wait_for(panel.cancel(), 60) == "cancelled"  # `await panel.cancel()`, or Ctrl-C in --wait
    await asyncio.wait_for(panel.finished(), 60)
    row = outputs[2]
    assert "application/vnd.jupyter.widget-view+json" not in row.last  # no front end will ever say "unfocused"
    assert row.last["text/plain"] == "Job job_test123 cancelled by the panel's Cancel button."


async def test_stall_notice_appears_after_a_long_quiet_spell(outputs) -> None:
    now = [0.0]
    job = FakeJob("sft")
    panel = MonitorPanel(job, tick=0.01, clock=lambda: now[0]).display()
    await asyncio.sleep(0.03)
    for _ in range(5):
        now[0] += 1.0
        job.event("sft.training.step", step=1)
        await asyncio.sleep(0.03)
    now[0] += 120
    panel.render_status(force=True)
    assert "may be stalled" in outputs[0].last["text/html"]
    job.finish()
    await asyncio.wait_for(panel.wait(), 60)
    assert "may be stalled" not in outputs[0].last["text/html"]


async def test_monitoring_error_is_shown_not_swallowed(outputs) -> None:
    job = FakeJob("sft")

    async def broken():
        raise RuntimeError("stream lost")
        yield  # pragma: no cover

    job.updates = broken  # type: ignore[method-assign]
    panel = MonitorPanel(job, tick=0.01).display()
    await asyncio.wait_for(panel.wait(), 60)
    assert "monitoring stopped: RuntimeError: stream lost" in outputs[0].last["text/plain"]


def test_show_job_wait_blocks_until_terminal_outside_a_running_loop(outputs) -> None:
    job = FakeJob("sft")
    _sft_history(job, steps=5)
    job.finish("succeeded", fine_tuned_model="ft:done")
    panel = show_job(job, wait=True)
    assert panel.final_status == "succeeded"
    assert "ft:done" in outputs[3].last["text/markdown"]


async def test_show_job_inside_the_loop_does_not_block_and_can_be_awaited(outputs) -> None:
    job = FakeJob("sft")
    panel = show_job(job, wait=True)
    assert not panel.done
    assert "await panel" in (panel.note or "")
    job.finish()
    assert await asyncio.wait_for(panel, 60) == "succeeded"


def test_repr_is_short_text() -> None:
    panel = panel_mod.MonitorPanel(FakeJob("rl"))
    assert panel._repr_mimebundle_() == {"text/plain": "MonitorPanel(job='job_test123', status='running')"}


async def test_interrupting_a_wait_sends_the_backend_cancel(outputs) -> None:
    job = FakeJob("sft")
    panel = MonitorPanel(job, tick=0.01).display()
    waiter = asyncio.ensure_future(panel.wait())
    await asyncio.sleep(0.05)
    waiter.cancel()  # what an interrupted `await panel` cell sees
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert job.cancel_calls == 1 and job.status == "cancelled"
    assert "cancelled by this cell (interrupted)" in outputs[0].last["text/plain"]


def test_show_jobs_waits_for_every_job_with_one_panel_each(outputs) -> None:
    from synth_nb.notebook.show import show_jobs

    jobs = [FakeJob("sft", job_id="job_a"), FakeJob("rl", job_id="job_b")]
    for job in jobs:
        job.finish("succeeded")
    panels = show_jobs(jobs, wait=True)
    assert [p.final_status for p in panels] == ["succeeded", "succeeded"]
    assert len(outputs) == 8  # status, chart, controls, artifacts per job


def test_show_job_wait_with_timeout_stops_watching_and_leaves_the_job_running(outputs) -> None:
    from synth_nb.errors import JobTimeoutError

    job = FakeJob("sft")
    _sft_history(job, steps=3)
    with pytest.raises(JobTimeoutError) as caught:
        show_job(job, wait=True, timeout=0.3, tick=0.01)
    assert caught.value.job_id == "job_test123" and caught.value.status == "running"
    assert "re-attach with: %synth_train --attach job_test123" in str(caught.value)
    assert job.cancel_calls == 0 and job.status == "running"  # only the watching stopped
    status, _chart, controls, _artifacts = outputs
    assert "stopped watching after 0.3 s; the job keeps running on the backend" in status.last["text/plain"]
    assert "%synth_train --attach job_test123" in status.last["text/html"]
    from ipywidgets.widgets.widget import _instances

    assert len(controls.shown) == 1  # the job runs on: its row stays live
    row = _instances[controls.last["application/vnd.jupyter.widget-view+json"]["model_id"]]
    assert not row.children[0].disabled  # Cancel still reaches the running job


def test_show_jobs_timeout_names_every_job_still_running(outputs) -> None:
    from synth_nb.errors import JobTimeoutError
    from synth_nb.notebook.show import show_jobs

    done, running = FakeJob("sft", job_id="job_done"), FakeJob("rl", job_id="job_slow")
    done.finish("succeeded")
    with pytest.raises(JobTimeoutError, match="job_slow") as caught:
        show_jobs([done, running], wait=True, timeout=0.3, tick=0.01)
    assert "job_done" not in str(caught.value)


def _pl_finished(job: FakeJob) -> None:
    for step, score in ((10, 0.5), (20, 0.7)):
        job.metric("gepa.trial.score", step, score)
    job.event("prompt.learning.candidate.evaluated", is_baseline=True, score=0.646)
    job.event("prompt.learning.validation.summary", baseline={"accuracy": 0.75}, results=[{"accuracy": 0.8}])
    job.event("prompt.learning.completed", finish_reason="budget_exhausted", rollouts_completed=20)
    job.finish("succeeded", best_score=0.8)


async def test_every_output_is_a_display_id_output_and_bundles_names_each(outputs) -> None:
    job = FakeJob("prompt_learning", job_id="pl_ids", algorithm="gepa")
    panel = MonitorPanel(job, tick=0.01).display()
    status, chart, controls, summary = outputs
    assert (status.display_id, chart.display_id, summary.display_id) == (
        panel.outputs.status, panel.outputs.chart, panel.outputs.summary)
    assert panel.outputs.status.startswith("synth-pl_ids-")
    assert MonitorPanel(job).outputs != panel.outputs  # a second panel of the job gets outputs of its own
    assert "waiting for the first trial score (small batch) point" in chart.last["text/plain"]  # not empty axes
    _pl_finished(job)
    await asyncio.wait_for(panel.wait(), 60)
    assert set(panel.bundles()) == {status.display_id, chart.display_id, summary.display_id}
    assert panel.bundles()[summary.display_id] == summary.last
    assert "baseline (search) 0.646" in chart.last["text/html"] and "best prompt (held-out) 0.8" in chart.last["text/html"]
    assert "\n# Prompt-learning summary: `pl_ids`" in summary.last["text/markdown"]  # below the links to its files


async def test_the_end_writes_the_result_files_links_them_and_leaves_the_row_as_text(outputs, tmp_path) -> None:
    job = FakeJob("prompt_learning", job_id="pl_export", algorithm="gepa")
    job.results_folder = tmp_path / "results"
    panel = MonitorPanel(job, tick=0.01, notebook_folder=tmp_path).display()
    row = outputs[2]
    assert "application/vnd.jupyter.widget-view+json" in row.last
    _pl_finished(job)
    await asyncio.wait_for(panel.wait(), 60)
    folder = tmp_path / "results" / "pl_export"
    assert (folder / "summary.md").is_file() and (folder / "summary_curve.png").is_file()
    summary = outputs[3].last["text/markdown"]
    assert summary.startswith("**Written** to `results/pl_export/`: [summary.md](results/pl_export/summary.md)")
    assert "# Prompt-learning summary: `pl_export`" in summary  # the result stays below the links
    # nothing is left to press: the row is text at once, with what was written where
    assert "application/vnd.jupyter.widget-view+json" not in row.last
    assert row.last["text/plain"] == ("Job pl_export succeeded: the search used its rollout budget (budget_exhausted). "
                                      "Wrote summary.md and summary_curve.png to results/pl_export/")
    # written elsewhere on request too, linked the same way
    again = panel.export_results(tmp_path / "elsewhere")
    assert again[0] == tmp_path / "elsewhere" / "pl_export" / "summary.md"
    assert outputs[3].last["text/markdown"].startswith("**Written** to `elsewhere/pl_export/`")


async def test_result_files_that_cannot_be_written_are_said_and_the_panel_still_ends(outputs, tmp_path) -> None:
    job = FakeJob("prompt_learning", job_id="pl_ro", algorithm="gepa")
    (tmp_path / "taken").write_text("a file, not a folder")
    job.results_folder = tmp_path / "taken"
    panel = MonitorPanel(job, tick=0.01, notebook_folder=tmp_path).display()
    _pl_finished(job)
    assert await asyncio.wait_for(panel.wait(), 60) == "succeeded"
    summary = outputs[3].last
    assert summary["text/plain"].startswith(f"Could not write the result files to {tmp_path / 'taken' / 'pl_ro'}/:")
    assert "# Prompt-learning summary: `pl_ro`" in summary["text/markdown"]  # the result is still shown
    assert "succeeded: the search used its rollout budget (budget_exhausted). Could not write the result files" \
        in outputs[2].last["text/plain"]


async def test_progress_ends_full_and_green_on_success_and_red_where_it_stopped_otherwise(outputs) -> None:
    done, stopped = FakeJob("prompt_learning", job_id="pl_ok"), FakeJob("prompt_learning", job_id="pl_stop")
    for job in (done, stopped):
        job.event("prompt.learning.progress", rollouts_completed=690, rollouts_total=1000)
    ok_panel = MonitorPanel(done, tick=0.01).display()
    stop_panel = MonitorPanel(stopped, tick=0.01).display()
    await asyncio.sleep(0.05)
    ok_panel.render_status(force=True)
    assert "synth-progress-running" in outputs[0].last["text/html"]
    assert "690/1000 rollouts (69%)" in outputs[0].last["text/plain"]
    done.finish("succeeded")
    stopped.finish("failed")
    await asyncio.wait_for(ok_panel.wait(), 60)
    await asyncio.wait_for(stop_panel.wait(), 60)
    ok_html, stop_html = outputs[0].last["text/html"], outputs[4].last["text/html"]
    assert "synth-progress-succeeded' max='1' value='1.0000'" in ok_html and "success-color" in ok_html
    assert "690/1000 rollouts · finished" in ok_html and "69%" not in ok_html
    assert "synth-progress-failed' max='1' value='0.6900'" in stop_html and "error-color" in stop_html
    assert "690/1000 rollouts (69%) · failed" in stop_html


async def test_a_chart_too_costly_to_redraw_live_still_ends_complete(outputs) -> None:
    from synth_nb.notebook.chart import LiveChart

    job = FakeJob("sft")
    chart = LiveChart("sft", cost_factor=1e6)  # after its first frame, no live redraw is affordable
    panel = MonitorPanel(job, tick=0.01, chart=chart)
    panel.display()
    shown = outputs[1]
    job.metric("train.loss", 1, 2.0)
    while chart.redraws == 0:
        await asyncio.sleep(0.01)
    first = shown.last["image/png"]
    for step in range(2, 201):
        job.metric("train.loss", step, 2.0 / step)
    await asyncio.sleep(0.1)
    assert chart.redraws == 1 and shown.last["image/png"] == first  # still the first frame
    job.finish("succeeded")
    await asyncio.wait_for(panel.wait(), 60)
    assert shown.last["image/png"] != first
    assert "train loss" in shown.last["text/plain"] and "200" in shown.last["text/plain"].splitlines()[-1]
    assert chart.point_count == 200


async def test_a_finished_panel_says_why_the_job_stopped_and_what_it_used_beside_its_estimate(outputs) -> None:
    """The status line ends on the job's one stop reason; under it, each figure beside the estimate it was sent
    with and the ratio, and the gain on named seeds: what the terminal's final block and summary.md say."""
    job = FakeJob("prompt_learning", job_id="pl_est", algorithm="gepa")
    job.estimate = {"basis": "the plan", "rollouts": 30, "rollouts_how": "rollout.budget 26 + held-out 4",  # type: ignore[attr-defined]
                    "tokens": None, "tokens_how": "sized by a dry rollout, which --check runs", "cost_usd": 0.0,
                    "cost": "$0 (the embedded backend runs on this machine)"}
    panel = MonitorPanel(job, tick=0.01).display()
    job.event("prompt.learning.progress", rollouts_completed=20, rollouts_total=26)
    job.event("prompt.learning.validation.summary", baseline={"accuracy": 0.5, "seeds": [0, 1, 2, 3]},
              results=[{"accuracy": 0.75}])
    job.event("prompt.learning.completed", finish_reason="budget_exhausted", rollouts_completed=20,
              heldout_rollouts=4, token_count_total=900, total_usd=0.0)
    job.finish("succeeded", best_score=0.75)
    await asyncio.wait_for(panel.wait(), 60)
    text, html = outputs[0].last["text/plain"], outputs[0].last["text/html"]
    lines = text.splitlines()
    assert "succeeded: the search used its rollout budget (budget_exhausted: 20 of 26 rollouts)" in lines
    assert "rollouts: 24 (20 search + 4 held-out) · estimate 30 · ×0.80" in lines
    assert "tokens:   900 · not estimated: sized by a dry rollout, which --check runs" in lines
    assert "cost:     $0.0000 · estimate $0 (the embedded backend runs on this machine)" in lines
    assert "gain:     held-out score 0.5000 → 0.7500: +0.2500, +50.0% better on 4 held-out seeds" in lines
    assert "<table class='synth-ending'" in html and "<th scope='row'>rollouts</th>" in html
    assert outputs[2].last["text/plain"].startswith(
        "Job pl_est succeeded: the search used its rollout budget (budget_exhausted: 20 of 26 rollouts).")
