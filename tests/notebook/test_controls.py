"""The panel's button row: each button calls what the panel handed it; nothing else is reached."""

from __future__ import annotations

from synth_nb.notebook.controls import PanelControls


class Calls:
    def __init__(self) -> None:
        self.cancels = 0
        self.show_all: list[bool] = []

    def cancel(self) -> None:
        self.cancels += 1

    def toggle(self, value: bool) -> None:
        self.show_all.append(value)


def test_cancel_asks_first_and_calls_back_once_confirmed() -> None:
    calls = Calls()
    controls = PanelControls(on_cancel=calls.cancel, on_show_all=calls.toggle)
    assert list(controls.widget.children) == [controls.cancel, controls.confirm_row, controls.show_all,
                                              controls.message]
    assert not controls.confirming
    controls.cancel.click()
    assert calls.cancels == 0 and controls.confirming
    assert controls.cancel.layout.display == "none"  # the question replaces the button
    assert "Keep running" in controls.message.value
    controls.keep.click()
    assert calls.cancels == 0 and not controls.confirming and controls.cancel.layout.display == ""
    controls.cancel.click()
    controls.confirm.click()
    assert calls.cancels == 1 and not controls.confirming
    assert controls.cancel.disabled and controls.cancel.description == "Cancelling…"


def test_a_job_that_ends_while_asking_takes_the_question_away() -> None:
    calls = Calls()
    controls = PanelControls(on_cancel=calls.cancel, on_show_all=calls.toggle)
    controls.cancel.click()
    controls.job_finished()
    assert not controls.confirming and controls.cancel.disabled and controls.cancel.description == "Job finished"
    controls.disable_all("The backend is gone.")
    assert controls.message.value == "The backend is gone." and controls.cancel.description == "Cancel unavailable"


def test_show_all_toggle_reports_the_new_value() -> None:
    calls = Calls()
    controls = PanelControls(on_cancel=calls.cancel, on_show_all=calls.toggle)
    controls.show_all.value = True
    controls.show_all.value = False
    assert calls.show_all == [True, False]


def test_the_snapshot_says_the_buttons_last_state_and_news_beyond_the_status() -> None:
    calls = Calls()
    controls = PanelControls(on_cancel=calls.cancel, on_show_all=calls.toggle, job_id="pl_1")
    controls.job_finished()
    controls.announce_status("Job pl_1: succeeded.")
    assert controls.snapshot("Job pl_1: succeeded.")["text/plain"].splitlines() == [
        "Job pl_1: succeeded.", "  Job finished: off", "  Show all events: not pressed"]
    controls.say("Wrote summary.md and summary_curve.png to results/pl_1/")
    assert controls.message.value == "Job pl_1: succeeded. Wrote summary.md and summary_curve.png to results/pl_1/"
    snapshot = controls.snapshot("Job pl_1: succeeded.")
    assert snapshot["text/plain"].splitlines()[-1] == (
        "  Last message: Wrote summary.md and summary_curve.png to results/pl_1/")
    assert "data-job-id='pl_1'" in snapshot["text/html"]
    assert "<li>Last message: Wrote summary.md and summary_curve.png to results/pl_1/</li>" in snapshot["text/html"]
