"""The panel's status says a running job's run-health warnings as they appear, with their evidence, and its
live region says how many there are (a screen reader hears the news once, not the figures each refresh)."""

from __future__ import annotations

from _fake_job import FakeJob

from synth_nb.notebook.monitor_view import status_announcement
from synth_nb.notebook.panel import MonitorPanel


def test_a_running_jobs_warning_is_in_its_status_as_it_appears() -> None:
    job = FakeJob("sft")
    for step in range(1, 4):
        job.metric("train.loss", step, 2.0)
    now = [0.0]
    panel = MonitorPanel(job, clock=lambda: now[0], headless=True)
    assert "warning" not in panel.status_bundle()["text/plain"]  # three points: too few to judge
    for step in range(4, 13):
        job.metric("train.loss", step, 2.0)
    now[0] = 10.0
    bundle = panel.status_bundle()
    assert "! warning: the loss is not falling (the model may not be learning): train loss 2 at the start and 2 " \
           "at the end over steps 1–12" in bundle["text/plain"]
    html = bundle["text/html"]
    assert "<div class='synth-health' data-code='sft.flat_loss'>⚠ <strong>Run health: the loss is not falling" in html
    assert "(from: train loss)" in html
    assert "1 run-health warning: the loss is not falling (the model may not be learning)." in \
        status_announcement(panel.state())
