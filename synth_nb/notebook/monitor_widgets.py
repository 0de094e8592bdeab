"""Two widgets of the monitor panel's control row that ipywidgets lacks (front end: ``js/monitor.js``).

* ``ToggleButton``: like ``ipywidgets.ToggleButton`` (``value``, ``description``, ``tooltip``), but the
  button says whether it is pressed (``aria-pressed``) and keeps its keys from the notebook's shortcuts.
* ``LiveRegion``: the panel's one ``role=status`` node. Its text is replaced, never the node, so screen
  readers announce each change; the status output, re-rendered on every refresh, cannot do that.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

__all__ = ["LiveRegion", "ToggleButton"]

_STATIC = Path(__file__).resolve().parent.parent / "static"


class _MonitorWidget(anywidget.AnyWidget):
    _esm = _STATIC / "monitor.js"
    _css = _STATIC / "monitor.css"
    kind = traitlets.Unicode().tag(sync=True)


class ToggleButton(_MonitorWidget):
    kind = traitlets.Unicode("toggle").tag(sync=True)
    value = traitlets.Bool(False).tag(sync=True)
    description = traitlets.Unicode("").tag(sync=True)
    tooltip = traitlets.Unicode("").tag(sync=True)


class LiveRegion(_MonitorWidget):
    """``value`` is what is announced; ``announce_status`` skips a status that has not changed."""

    kind = traitlets.Unicode("live_region").tag(sync=True)
    value = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._last_status = ""

    def announce_status(self, text: str) -> None:
        """Say ``text`` unless it is the status said last (other news, such as an export, stays shown)."""
        if text and text != self._last_status:
            self._last_status = text
            self.value = text
