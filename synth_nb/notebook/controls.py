"""The monitor panel's ipywidgets row: Cancel (asks to confirm), show-all toggle, one live region.

The panel owns one ``PanelControls`` and hands it what each button does; the controls never look at the
panel, the job or the flow, so they can be tested (and restyled) on their own. The row is live only while
the kernel is: everything a reader needs later (status, chart, summary, links to the result files) is in the panel's
plain outputs, never only here.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

__all__ = ["PanelControls"]


class PanelControls:
    """Cancel / show-all buttons; ``widget`` is what gets displayed.

    Cancel stops a job for good, so it first asks: "Yes, cancel the job" sends it, "Keep running" (which
    gets the focus, so a second Enter is harmless) puts the row back. The row has nothing to offer once
    the job ended (the panel writes and links the result files itself), so it then becomes text.
    """

    def __init__(self, *, on_cancel: Callable[[], object], on_show_all: Callable[[bool], None],
                 show_all: bool = False, job_id: str = "", kernel_gone_notice: str = "") -> None:
        import ipywidgets as w

        from synth_nb.notebook.monitor_widgets import ActionButton, LiveRegion, ToggleButton

        self._on_cancel, self._on_show_all = on_cancel, on_show_all
        # ActionButton, not ipywidgets' Button: keys pressed on it must not edit the notebook
        self.cancel = ActionButton(description="Cancel job", button_style="danger", css_class="synth-cancel",
                                   tooltip="Stop the job on the backend (asks to confirm first)")
        self.confirm_text = w.HTML("Cancel this job on the backend? It cannot be resumed.")
        self.confirm_text.add_class("synth-confirm-text")
        self.confirm = ActionButton(description="Yes, cancel the job", button_style="danger",
                                    css_class="synth-confirm-cancel", group_label="Cancel this job?",
                                    tooltip="Send cancel to the backend and wait for the confirmed terminal state")
        self.keep = ActionButton(description="Keep running", tooltip="Do not cancel", css_class="synth-keep-running")
        self.confirm_row = w.HBox([self.confirm_text, self.confirm, self.keep])
        self.confirm_row.add_class("synth-confirm")
        self.confirm_row.layout.display = "none"
        self.show_all = ToggleButton(value=show_all, description="Show all events",
                                     tooltip="Include routine events the CLI hides")
        self.show_all.add_class("synth-show-all")
        # the panel's one live region: its text changes, never its node; it says when the kernel is gone
        self.message = LiveRegion(job_id=job_id, kernel_gone_notice=kernel_gone_notice)
        self.message.add_class("synth-controls-msg")
        self.cancel.on_click(self._cancel_clicked)
        self.confirm.on_click(self._confirm_clicked)
        self.keep.on_click(self._keep_clicked)
        self.show_all.observe(self._toggled, names="value")
        self.widget = w.HBox([self.cancel, self.confirm_row, self.show_all, self.message])
        self.widget.add_class("synth-controls")  # wraps in narrow output areas (static/monitor.css)

    @property
    def confirming(self) -> bool:
        return self.confirm_row.layout.display != "none"

    def _cancel_clicked(self, _: Any) -> None:
        self.cancel.layout.display = "none"
        self.confirm_row.layout.display = ""
        self.message.value = "Cancel this job? Choose Yes, cancel the job, or Keep running."
        self.keep.focus()

    def _keep_clicked(self, _: Any) -> None:
        self.confirm_row.layout.display = "none"
        self.cancel.layout.display = ""
        self.message.value = "The job keeps running."
        self.cancel.focus()

    def _confirm_clicked(self, _: Any) -> None:
        self.confirm_row.layout.display = "none"
        self.cancel.layout.display = ""
        self.cancel.disabled = True
        self.cancel.description = "Cancelling…"
        self.message.value = "Cancelling the job…"
        self.show_all.focus()  # the pressed button is hidden and Cancel is off: the focus stays in the row
        self._on_cancel()

    def _toggled(self, change: dict[str, Any]) -> None:
        self._on_show_all(bool(change["new"]))

    def job_finished(self) -> None:
        """The job is terminal: Cancel has nothing left to do."""
        self.confirm_row.layout.display = "none"
        self.cancel.layout.display = ""
        self.cancel.disabled = True
        self.cancel.button_style = ""
        self.cancel.description = "Job finished"
        self.message.kernel_gone_notice = ""  # an ended job loses nothing when its kernel goes

    def disable_all(self, reason: str) -> None:
        """Nothing can reach the job any more (its kernel or backend is gone): every button is off."""
        self.job_finished()
        self.cancel.description = "Cancel unavailable"
        self.message.value = reason

    def backend_unreachable(self, reason: str | None) -> None:
        """While the backend does not answer, Cancel cannot reach the job: off, saying why; back on after."""
        if reason is not None:
            self.confirm_row.layout.display = "none"
            self.cancel.layout.display = ""
            self.cancel.disabled = True
            self.cancel.description = "Backend unreachable"
            self.message.value = reason
        elif self.cancel.description == "Backend unreachable":
            self.cancel.disabled = False
            self.cancel.description = "Cancel job"
            self.message.value = "The backend answers again."

    def announce_status(self, text: str) -> None:
        """Tell screen readers about a new status (repeats of the last one are not said again)."""
        self.message.announce_status(text)

    @property
    def holds_focus(self) -> bool:
        """The front end last said the keyboard focus is in this row."""
        return self.message.holds_focus

    def release_when_unfocused(self, release: Callable[[], object]) -> None:
        """The row is over; ``release`` (which replaces it) runs once none of its controls holds the focus."""
        self.message.release(release)

    def say(self, text: str) -> None:
        """News beyond the status (where the result files were written, or why they were not), said after it."""
        self.message.announce_news(text)

    def snapshot(self, head: str, *, ended: bool = False) -> dict[str, Any]:
        """``head`` and the buttons' last state as static HTML and text: what replaces the row once it is over.

        Only what the row's synced widgets showed already (never a secret) and the panel's ``head``. For an
        ``ended`` job there is nothing left to press: one line, the head (status and why it stopped) and what
        was written where, no button states."""
        if ended:
            line = " ".join(part for part in (head, self.message.news) if part)
            job = html.escape(self.message.job_id, quote=True)
            return {"text/html": f"<div class='synth-controls-snapshot' data-job-id='{job}'>"
                                 f"<p>{html.escape(line)}</p></div>",
                    "text/plain": line}

        def state(button: Any) -> str:
            return "off" if button.disabled else "on"

        lines = [f"{self.cancel.description}: {state(self.cancel)}",
                 f"Show all events: {'pressed' if self.show_all.value else 'not pressed'}"]
        if self.message.news:  # beyond the status the head says (files written, an error)
            lines.append(f"Last message: {self.message.news}")
        items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
        job = html.escape(self.message.job_id, quote=True)
        return {"text/html": f"<div class='synth-controls-snapshot' data-job-id='{job}'><p>{html.escape(head)}</p>"
                             f"<ul aria-label='The buttons when they stopped'>{items}</ul></div>",
                "text/plain": "\n".join([head, *(f"  {line}" for line in lines)])}