"""Widgets of the monitor panel's control row that ipywidgets lacks (front end: ``js/monitor.js``, the
live region's ``js/live_region.js``: a saved notebook's widget state holds each widget's script).

* ``ActionButton``: like ``ipywidgets.Button`` (``description``, ``tooltip``, ``disabled``,
  ``button_style``, ``on_click``, ``click``, ``focus``), but keys pressed on it stay in the widget: on an
  ipywidgets button JupyterLab's command-mode shortcuts fire (``a`` inserts a cell, ``d d`` deletes one).
* ``ToggleButton``: like ``ipywidgets.ToggleButton`` (``value``, ``description``, ``tooltip``), but the
  button says whether it is pressed (``aria-pressed``) and keeps its keys from the notebook's shortcuts.
* ``LiveRegion``: the panel's one ``role=status`` node. Its text is replaced, never the node, so screen
  readers announce each change; the status output, re-rendered on every refresh, cannot do that.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import traitlets

__all__ = ["ActionButton", "LiveRegion", "ToggleButton"]

_STATIC = Path(__file__).resolve().parent.parent / "static"


class _MonitorWidget(anywidget.AnyWidget):
    _esm = _STATIC / "monitor.js"
    _css = _STATIC / "monitor.css"
    kind = traitlets.Unicode().tag(sync=True)


class ActionButton(_MonitorWidget):
    """A push button; ``css_class`` names the ``<button>`` itself (tests and styles find it by that)."""

    kind = traitlets.Unicode("button").tag(sync=True)
    description = traitlets.Unicode("").tag(sync=True)
    tooltip = traitlets.Unicode("").tag(sync=True)
    disabled = traitlets.Bool(False).tag(sync=True)
    #: "" or "danger", as in ipywidgets
    button_style = traitlets.Unicode("").tag(sync=True)
    css_class = traitlets.Unicode("").tag(sync=True)
    #: when set, the box the button sits in is a group with this name (boxes take no ARIA attributes)
    group_label = traitlets.Unicode("").tag(sync=True)
    #: kept for parity with ``ipywidgets.Button`` (the names must not start with an icon glyph)
    icon = ""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._handlers: list[Callable[[ActionButton], object]] = []
        self.on_msg(self._front_end_message)

    def on_click(self, callback: Callable[[ActionButton], object]) -> None:
        self._handlers.append(callback)

    def click(self) -> None:
        """Run the click handlers, as a click in the front end does (a disabled button does nothing)."""
        if self.disabled:
            return
        for handler in list(self._handlers):
            handler(self)

    def _front_end_message(self, _: Any, content: Any, buffers: Any) -> None:
        if isinstance(content, dict) and content.get("event") == "click":
            self.click()


class ToggleButton(_MonitorWidget):
    kind = traitlets.Unicode("toggle").tag(sync=True)
    value = traitlets.Bool(False).tag(sync=True)
    description = traitlets.Unicode("").tag(sync=True)
    tooltip = traitlets.Unicode("").tag(sync=True)


class LiveRegion(_MonitorWidget):
    """``value`` is what is announced; ``announce_status`` skips a status that has not changed.

    ``kernel_gone_notice`` is what the region says instead if the kernel goes while the job ``job_id``
    still runs (empty once it has ended); the front end then also stops the status line claiming a live
    status and an ETA, and (kernel restarted or dead) leaves a static copy of the row in the notebook.
    """

    _esm = _STATIC / "live_region.js"
    kind = traitlets.Unicode("live_region").tag(sync=True)
    value = traitlets.Unicode("").tag(sync=True)
    kernel_gone_notice = traitlets.Unicode("").tag(sync=True)
    job_id = traitlets.Unicode("").tag(sync=True)
    #: the row is over, but replacing it now could drop a keyboard focus it holds: the front end says
    #: ("unfocused") once no control of the row has the focus, and ``on_unfocused`` is called then
    release_when_unfocused = traitlets.Bool(False).tag(sync=True)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self._last_status = ""
        self._on_unfocused: Callable[[], object] | None = None
        #: the front end said the keyboard focus is in the row (it says so on each change)
        self.holds_focus = False
        self.on_msg(self._front_end_message)

    def release(self, on_unfocused: Callable[[], object]) -> None:
        """Call ``on_unfocused`` once the front end says the row holds no focus (at once if it holds none)."""
        self._on_unfocused = on_unfocused
        self.release_when_unfocused = True

    def _front_end_message(self, _: Any, content: Any, buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        if content.get("event") == "focus":
            self.holds_focus = bool(content.get("held"))
        elif content.get("event") == "unfocused" and self._on_unfocused is not None:
            on_unfocused, self._on_unfocused = self._on_unfocused, None
            on_unfocused()

    @property
    def news(self) -> str:
        """What the region says beyond the status last announced (files written, an error); "" if nothing."""
        if self._last_status and self.value.startswith(self._last_status):
            return self.value[len(self._last_status):].strip()
        return self.value

    def announce_news(self, text: str) -> None:
        """Say ``text`` after the status last announced, in one announcement: a status replaced by news a moment
        later may never be read."""
        self.value = f"{self._last_status} {text}".strip()

    def announce_status(self, text: str) -> None:
        """Say ``text`` unless it is the status said last (other news, such as where the result files went, stays shown)."""
        if text and text != self._last_status:
            self._last_status = text
            self.value = text
