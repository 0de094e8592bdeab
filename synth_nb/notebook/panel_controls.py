"""The monitor panel's ipywidgets row: Cancel, show-all toggle, Export (with its message slot)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from synth_nb.notebook import artifacts

if TYPE_CHECKING:
    from synth_nb.notebook.panel import MonitorPanel

__all__ = ["disable_cancel", "enable_export", "make_controls"]


def make_controls(panel: MonitorPanel) -> Any:
    """Cancel / show-all / Export buttons (ipywidgets); None where widgets are unavailable."""
    try:
        import ipywidgets as w
    except ImportError:  # pragma: no cover - ipywidgets is a core dependency
        return None
    cancel = w.Button(description="Cancel job", button_style="danger", icon="stop",
                      tooltip="Send cancel to the backend and wait for the confirmed terminal state")
    cancel.add_class("synth-cancel")
    toggle = w.ToggleButton(value=panel.show_all, description="Show all events",
                            tooltip="Include routine events the CLI hides")
    toggle.add_class("synth-show-all")
    export = w.Button(description="Export summary", icon="download", disabled=True,
                      tooltip="Write summary.md (and the curve PNG) next to the notebook")
    export.add_class("synth-export")
    export.layout.display = "" if panel.job.flow == "prompt_learning" else "none"
    out = w.HTML(value="")
    out.add_class("synth-controls-msg")

    def on_cancel(_: Any) -> None:
        cancel.disabled = True
        cancel.description = "Cancelling…"
        panel.request_cancel()

    def on_toggle(change: dict[str, Any]) -> None:
        panel.show_all = bool(change["new"])
        panel.render_status(force=True)

    def on_export(_: Any) -> None:
        try:
            written = artifacts.export_summary(panel.job, chart_png=panel.chart.png)
            out.value = "Wrote " + ", ".join(p.name for p in written)
        except Exception as exc:  # show the problem next to the button
            out.value = f"Export failed: {type(exc).__name__}: {exc}"

    cancel.on_click(on_cancel)
    toggle.observe(on_toggle, names="value")
    export.on_click(on_export)
    return w.HBox([cancel, toggle, export, out])


def disable_cancel(controls: Any) -> None:
    if controls is not None:
        cancel = controls.children[0]
        cancel.disabled = True
        cancel.button_style = ""
        cancel.description = "Job finished"


def enable_export(controls: Any) -> None:
    if controls is not None:
        controls.children[2].disabled = False
