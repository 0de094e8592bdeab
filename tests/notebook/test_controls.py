"""The panel's button row: each button calls what the panel handed it; nothing else is reached."""

from __future__ import annotations

from pathlib import Path
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


def test_cancel_disables_itself_and_calls_back_once() -> None:
    calls = Calls()
    controls = PanelControls(on_cancel=calls.cancel, on_show_all=calls.toggle, on_export=None)
    controls.cancel.click()
    assert calls.cancels == 1
    assert controls.cancel.disabled and controls.cancel.description == "Cancelling…"
    assert controls.export.layout.display == "none"  # nothing to export: the button is hidden
    assert list(controls.widget.children) == [controls.cancel, controls.show_all, controls.export, controls.message]


def test_show_all_toggle_reports_the_new_value() -> None:
    calls = Calls()
    controls = PanelControls(on_cancel=calls.cancel, on_show_all=calls.toggle, on_export=None)
    controls.show_all.value = True
    controls.show_all.value = False
    assert calls.show_all == [True, False]


def test_export_is_enabled_when_results_are_ready_and_reports_problems_next_to_the_button(tmp_path: Path) -> None:
    outcome: list[Any] = [OSError("read-only folder")]

    def export() -> list[Path]:
        if isinstance(outcome[0], Exception):
            raise outcome[0]
        return outcome[0]

    calls = Calls()
    controls = PanelControls(on_cancel=calls.cancel, on_show_all=calls.toggle, on_export=export)
    assert controls.export.disabled and controls.export.layout.display == ""
    controls.results_ready()
    controls.job_finished()
    assert not controls.export.disabled
    assert controls.cancel.disabled and controls.cancel.description == "Job finished"
    controls.export.click()
    assert controls.message.value == "Export failed: OSError: read-only folder"
    outcome[0] = [tmp_path / "summary.md"]
    controls.export.click()
    assert controls.message.value == "Wrote summary.md"
