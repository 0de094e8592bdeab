"""The panel's button row: each button calls what the panel handed it; nothing else is reached."""

from __future__ import annotations

from typing import Any

from synth_nb.notebook.controls import PanelControls


class Calls:
    def __init__(self) -> None:
        self.cancels = 0
        self.show_all: list[bool] = []
        self.exports: Any = None

    def cancel(self) -> None:
        self.cancels += 1

    def toggle(self, value: bool) -> None:
        self.show_all.append(value)


def test_cancel_asks_first_and_calls_back_once_confirmed() -> None:
    calls = Calls()
    controls = PanelControls(on_cancel=calls.cancel, on_show_all=calls.toggle, on_export=None)
    assert list(controls.widget.children) == [controls.cancel, controls.confirm_row, controls.show_all,
                                              controls.export, controls.message]
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
    assert controls.export.layout.display == "none"  # nothing to export: the button is hidden


def test_a_job_that_ends_while_asking_takes_the_question_away() -> None:
    calls = Calls()
    controls = PanelControls(on_cancel=calls.cancel, on_show_all=calls.toggle, on_export=None)
    controls.cancel.click()
    controls.job_finished()
    assert not controls.confirming and controls.cancel.disabled and controls.cancel.description == "Job finished"
    controls.disable_all("The backend is gone.")
    assert controls.message.value == "The backend is gone." and controls.export.disabled


def test_show_all_toggle_reports_the_new_value() -> None:
    calls = Calls()
    controls = PanelControls(on_cancel=calls.cancel, on_show_all=calls.toggle, on_export=None)
    controls.show_all.value = True
    controls.show_all.value = False
    assert calls.show_all == [True, False]


def test_export_is_enabled_when_results_are_ready_and_says_how_it_went() -> None:
    exports: list[int] = []
    calls = Calls()
    controls = PanelControls(on_cancel=calls.cancel, on_show_all=calls.toggle, on_export=lambda: exports.append(1),
                             export_hint="Write summary.md and its curve PNG to results/pl_1/")
    assert controls.export.disabled and controls.export.layout.display == ""
    assert controls.export.tooltip == "Write summary.md and its curve PNG to results/pl_1/"
    controls.results_ready()
    controls.job_finished()
    assert not controls.export.disabled
    assert controls.cancel.disabled and controls.cancel.description == "Job finished"
    controls.export.click()
    # the button keeps its focus (a disabled one would drop it to the page); a second press waits its turn
    assert exports == [1] and not controls.export.disabled and controls.message.value == "Exporting…"
    controls.export.click()
    assert exports == [1]
    controls.export_finished("Export failed: OSError: read-only folder")
    assert not controls.export.disabled and controls.message.value == "Export failed: OSError: read-only folder"
    controls.export.click()
    controls.export_finished("Wrote summary.md and summary_curve.png to results/pl_1/")
    assert controls.message.value.startswith("Wrote summary.md")
