"""The panel's button row: Cancel hands off to the panel, Show-all re-renders, Export writes the summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _fake_job import FakeJob

from synth_nb.notebook.panel_controls import disable_cancel, enable_export, make_controls


class StubPanel:
    def __init__(self, flow: str) -> None:
        self.job = FakeJob(flow)
        self.show_all = False
        self.chart: Any = type("Chart", (), {"png": None})()
        self.cancel_requests = 0
        self.renders = 0

    def request_cancel(self) -> None:
        self.cancel_requests += 1

    def render_status(self, *, force: bool = False) -> None:
        self.renders += 1


def test_cancel_disables_itself_and_asks_the_panel_once() -> None:
    panel = StubPanel("sft")
    cancel, toggle, export, _msg = make_controls(panel).children
    cancel.click()
    assert panel.cancel_requests == 1
    assert cancel.disabled and cancel.description == "Cancelling…"
    assert export.layout.display == "none"  # only prompt learning has a summary to export


def test_show_all_toggle_rerenders_the_panel() -> None:
    panel = StubPanel("rl")
    toggle = make_controls(panel).children[1]
    toggle.value = True
    assert panel.show_all is True and panel.renders == 1


def test_export_is_enabled_at_the_end_and_reports_problems_next_to_the_button(monkeypatch, tmp_path: Path) -> None:
    from synth_nb.notebook import artifacts

    panel = StubPanel("prompt_learning")
    controls = make_controls(panel)
    cancel, _toggle, export, msg = controls.children
    assert export.disabled and export.layout.display == ""
    enable_export(controls)
    disable_cancel(controls)
    assert not export.disabled
    assert cancel.disabled and cancel.description == "Job finished"

    def fail(job: Any, chart_png: Any = None) -> list[Path]:
        raise OSError("read-only folder")

    monkeypatch.setattr(artifacts, "export_summary", fail)
    export.click()
    assert msg.value == "Export failed: OSError: read-only folder"
    monkeypatch.setattr(artifacts, "export_summary", lambda job, chart_png=None: [tmp_path / "summary.md"])
    export.click()
    assert msg.value == "Wrote summary.md"
