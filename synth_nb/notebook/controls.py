"""The monitor panel's ipywidgets row: Cancel, show-all toggle, Export (with its message slot).

The panel owns one ``PanelControls`` and hands it what each button does; the controls never look at the
panel, the job or the flow, so they can be tested (and restyled) on their own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["PanelControls"]


class PanelControls:
    """Cancel / show-all / Export buttons; ``widget`` is what gets displayed.

    ``on_export`` is None when the job's flow writes no result files: the button is then hidden.
    """

    def __init__(self, *, on_cancel: Callable[[], object], on_show_all: Callable[[bool], None],
                 on_export: Callable[[], list[Path]] | None, show_all: bool = False) -> None:
        import ipywidgets as w

        from synth_nb.notebook.monitor_widgets import LiveRegion, ToggleButton

        self._on_cancel, self._on_show_all, self._on_export = on_cancel, on_show_all, on_export
        self.cancel = w.Button(description="Cancel job", button_style="danger",
                               tooltip="Send cancel to the backend and wait for the confirmed terminal state")
        self.cancel.add_class("synth-cancel")
        self.show_all = ToggleButton(value=show_all, description="Show all events",
                                       tooltip="Include routine events the CLI hides")
        self.show_all.add_class("synth-show-all")
        self.export = w.Button(description="Export summary", disabled=True,
                               tooltip="Write summary.md (and the curve PNG) next to the notebook")
        self.export.add_class("synth-export")
        self.export.layout.display = "" if on_export is not None else "none"
        self.message = LiveRegion()  # the panel's one live region: its text changes, never its node
        self.message.add_class("synth-controls-msg")
        self.cancel.on_click(self._cancel_clicked)
        self.show_all.observe(self._toggled, names="value")
        self.export.on_click(self._export_clicked)
        self.widget = w.HBox([self.cancel, self.show_all, self.export, self.message])
        self.widget.add_class("synth-controls")  # wraps in narrow output areas (static/monitor.css)

    def _cancel_clicked(self, _: Any) -> None:
        self.cancel.disabled = True
        self.cancel.description = "Cancelling…"
        self._on_cancel()

    def _toggled(self, change: dict[str, Any]) -> None:
        self._on_show_all(bool(change["new"]))

    def _export_clicked(self, _: Any) -> None:
        if self._on_export is None:
            return
        try:
            written = self._on_export()
            self.message.value = "Wrote " + ", ".join(p.name for p in written)
        except Exception as exc:  # show the problem next to the button
            self.message.value = f"Export failed: {type(exc).__name__}: {exc}"

    def job_finished(self) -> None:
        """The job is terminal: Cancel has nothing left to do, the results can be exported."""
        self.cancel.disabled = True
        self.cancel.button_style = ""
        self.cancel.description = "Job finished"

    def announce_status(self, text: str) -> None:
        """Tell screen readers about a new status (repeats of the last one are not said again)."""
        self.message.announce_status(text)

    def results_ready(self) -> None:
        self.export.disabled = False
