"""Noise filtering as the CLI does it, progress/ETA, stall detection, and the HTML/text rendering."""

from __future__ import annotations

from _fake_job import FakeJob

from synth_nb.notebook.monitor_view import (
    PanelState,
    Progress,
    StallDetector,
    format_duration,
    is_noise,
    linked_lines,
    phases_of,
    progress_of,
    render_html,
    render_text,
    status_announcement,
    visible_events,
)
from synth_nb.records import Event


def ev(seq: int, type_: str, message: str = "", level: str = "info", **data):
    return Event(seq=seq, type=type_, message=message, level=level, data=data)


def test_noise_lists_match_the_cli_per_flow_and_never_hide_errors() -> None:
    assert is_noise("sft", ev(1, "sft.worker.alive"))
    assert not is_noise("sft", ev(1, "sft.training.started"))
    assert is_noise("rl", ev(1, "rl.job.created", data_note="modal container"))
    assert is_noise("rl", ev(1, "rl.status", "Hatchet queued"))
    assert is_noise("prompt_learning", ev(1, "mipro.tpe.update"))
    assert not is_noise("prompt_learning", ev(1, "prompt.learning.trial.results"))
    assert not is_noise("sft", ev(1, "sft.worker.alive", level="error"))
    assert not is_noise("rl", ev(1, "modal.boot.failed"))


def test_visible_events_keeps_the_newest_n_and_can_show_all() -> None:
    events = [ev(i, "sft.worker.alive" if i % 2 else "sft.training.step") for i in range(1, 21)]
    shown = visible_events("sft", events, 3)
    assert [e.seq for e in shown] == [16, 18, 20]
    assert [e.seq for e in visible_events("sft", events, 3, show_all=True)] == [18, 19, 20]


def test_progress_from_rollout_events_uses_backend_eta() -> None:
    events = [ev(1, "prompt.learning.progress", rollouts_completed=30, rollouts_total=120, eta_seconds=90)]
    p = progress_of({}, events, elapsed=30.0)
    assert (p.done, p.total, p.unit, p.eta_seconds) == (30, 120, "rollouts", 90)
    assert p.label() == "30/120 rollouts (25%)"


def test_progress_from_steps_extrapolates_eta_and_reads_total_from_status() -> None:
    p = progress_of({"total_steps": 100}, [ev(1, "sft.training.step", step=25)], elapsed=60.0)
    assert p.fraction == 0.25 and p.eta_seconds == 180.0


def test_no_eta_is_extrapolated_from_the_first_rollouts() -> None:
    first = progress_of({}, [ev(1, "prompt.learning.progress", rollouts_completed=1, rollouts_total=1000)], 0.3)
    assert first.label() == "1/1000 rollouts (0%)" and first.eta_seconds is None
    later = progress_of({}, [ev(2, "prompt.learning.progress", rollouts_completed=120, rollouts_total=1000)], 0.4)
    assert later.eta_seconds is not None and round(later.eta_seconds, 2) == 2.93


def test_progress_from_status_document_only() -> None:
    assert progress_of({"current_step": 5, "total_steps": 10}, [], elapsed=None).label() == "5/10 steps (50%)"
    assert progress_of({}, [], elapsed=None) == Progress()


def test_stall_detector_uses_the_usual_gap_with_a_floor() -> None:
    d = StallDetector(factor=5, min_seconds=30)
    for t in range(0, 100, 10):  # one event every 10 s
        d.observe(float(t))
    assert d.usual_gap() == 10
    assert d.stalled_for(90 + 40) is None  # 40 s quiet < 5 x 10 s
    assert d.stalled_for(90 + 51) == 51
    quick = StallDetector(factor=5, min_seconds=30)
    for t in range(10):
        quick.observe(t * 0.1)
    assert quick.stalled_for(0.9 + 20) is None  # floor of 30 s


def test_format_duration() -> None:
    assert [format_duration(s) for s in (None, 0.01, 2.34, 5, 12.4, 64, 65, 3720)] == [
        "–", "< 0.1 s", "2.3 s", "5.0 s", "12 s", "1 min 04 s", "1 min 05 s", "1 h 02 min"]


def _state(**kw) -> PanelState:
    base = dict(job_id="job_1", flow="sft", algorithm=None, status="running", elapsed=65.0,
                progress=Progress(5, 10, "steps", 65.0), events=[ev(3, "sft.job.failed", "boom <b>", "error")],
                hidden_count=4, show_all=False)
    base.update(kw)
    return PanelState(**base)


def test_html_escapes_highlights_errors_and_shows_stall() -> None:
    page = render_html(_state(stalled_for=120.0, usual_gap=2.0))
    assert "boom &lt;b&gt;" in page and "boom <b>" not in page
    assert "class='synth-err'>⚠ " in page  # an error is marked by a symbol, not only by its colour
    assert "No event for 2 min 00 s" in page
    assert "role=" not in page  # re-rendered each refresh: announcing is the LiveRegion's job
    assert "4 routine hidden" in page
    assert "data-status='running'" in page
    assert "aria-label='Progress of job job_1'" in page  # named for the job, not just "progress"
    assert "<span class='synth-eta'> · ETA " in page  # the part a front end drops once the kernel is gone


def test_text_alternative_has_status_progress_and_events() -> None:
    text = render_text(_state())
    assert "status=running" in text and "5/10 steps (50%)" in text and "! [3] sft.job.failed (error): boom" in text


def test_progress_total_comes_from_an_older_event_when_the_newest_lacks_it() -> None:
    events = [ev(1, "prompt.learning.rollouts.start", rollouts_total=1000),
              ev(2, "prompt.learning.progress", rollouts_completed=250)]
    assert progress_of({}, events, elapsed=10.0).label() == "250/1000 rollouts (25%)"


def test_status_announcement_changes_with_news_not_with_the_clock() -> None:
    running = status_announcement(_state())
    assert running == "Job job_1: running."
    assert status_announcement(_state(elapsed=300.0, progress=Progress(9, 10, "steps", 5.0))) == running
    stalled = status_announcement(_state(stalled_for=120.0, usual_gap=2.0))
    assert stalled == status_announcement(_state(stalled_for=400.0, usual_gap=2.0)) != running
    assert "may be stalled" in stalled
    done = status_announcement(_state(status="succeeded", note="finished: succeeded"))
    assert done == "Job job_1: succeeded."  # the note only repeats the status
    cancelled = status_announcement(_state(status="cancelled", note="cancelled: the backend confirmed status cancelled"))
    assert cancelled == "Job job_1: cancelled. The backend confirmed status cancelled."
    assert status_announcement(_state(note="cancel requested…")).endswith("Cancel requested…")


def test_phases_leave_out_entries_without_one_and_end_with_the_newest_message() -> None:
    job = FakeJob("sft")
    assert phases_of(job) == ""
    job.timeline += [{"phase": "queued"}, {"phase": "training", "message": "8 x H100"}, {"raw": "checkpoint saved"}]
    assert phases_of(job) == "phases: queued → training: 8 x H100"
    job.timeline.append({"phase": "succeeded", "message": ""})
    assert phases_of(job) == "phases: queued → training → succeeded"


def test_a_linked_job_while_followed_once_over_and_when_it_could_not_be_followed() -> None:
    job, linked = FakeJob("rl"), FakeJob("sft", job_id="job_linked1")
    assert linked_lines(job, final=False) == []
    linked.event("sft.training.started")
    linked.metric("train.loss", 1, 0.9)
    linked.metric("train.loss", 2, 0.7)
    linked.metric("val.loss", 1, 0.8)
    job.linked, job.linked_note = linked, {"job_id": "job_linked1", "flow": "sft"}
    assert linked_lines(job, final=False) == [
        "linked job job_linked1 (sft, running, 1 events so far) is followed too (%synth_train --attach job_linked1 "
        "follows it alone)"]
    assert linked_lines(job, final=True) == [
        "linked job: job_linked1 (sft): running, 1 events, 3 metrics (%synth_train --attach job_linked1)",
        "linked last metrics: train.loss=0.7000 (step 2), val.loss=0.8000 (step 1)"]
    job.linked, job.linked_note = None, {"job_id": "job_gone", "error": "job job_gone was not found"}
    assert linked_lines(job, final=True) == ["linked job job_gone could not be followed: job job_gone was not found"]


def test_phases_and_the_linked_job_are_lines_of_the_status_output() -> None:
    state = PanelState(job_id="job_1", flow="rl", algorithm=None, status="running", elapsed=3.0,
                       progress=Progress(), events=[], hidden_count=0, show_all=False,
                       phases="phases: queued → training", linked=("linked job <b>x</b> could not be followed: gone",))
    assert render_text(state).splitlines()[1:3] == ["phases: queued → training",
                                                    "linked job <b>x</b> could not be followed: gone"]
    html = render_html(state)
    assert "<div class='synth-phases'>phases: queued → training</div>" in html
    assert "<div class='synth-linked'>linked job &lt;b&gt;x&lt;/b&gt; could not be followed: gone</div>" in html
