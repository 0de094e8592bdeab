"""The plain outputs a monitor panel keeps current: status, chart and summary, each a display output
updated in place by its ``display_id``.

They are ordinary ``display_data`` outputs (HTML, PNG, Markdown, each with a text copy), so the saved
notebook keeps their last state, and nbviewer, ``nbconvert`` and a notebook reopened without a kernel
show them. Every message goes through IPython's display publisher (``display`` / ``update_display``),
so whoever routes a cell's outputs (the wizard sends its panels' outputs to its own cell) sees them all.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PanelOutputs", "SummaryOutput"]


@dataclass(frozen=True)
class PanelOutputs:
    """The display ids of one panel's three outputs, in the order they are shown."""

    status: str
    chart: str
    summary: str

    @classmethod
    def for_job(cls, job_id: str) -> PanelOutputs:
        """Fresh ids naming the job: two panels of one job (e.g. after ``--attach``) never share an output."""
        base = f"synth-{job_id}-{uuid.uuid4().hex[:8]}"
        return cls(f"{base}-status", f"{base}-chart", f"{base}-summary")

    @staticmethod
    def show(display_id: str, bundle: dict[str, Any]) -> None:
        """Create the output ``display_id`` in the current cell."""
        from IPython.display import display

        display(bundle, raw=True, display_id=display_id)

    @staticmethod
    def update(display_id: str, bundle: dict[str, Any]) -> None:
        """Replace the output ``display_id`` wherever it is shown."""
        from IPython.display import update_display

        update_display(bundle, raw=True, display_id=display_id)


@dataclass
class SummaryOutput:
    """What the summary output holds: the export links (once exported) above the job's result.

    ``text_lines``: the text copy keeps that many lines and says how many more the result files hold (a
    headless run's saved notebook is read as text; its Markdown or HTML copy keeps everything)."""

    result: dict[str, Any] | None = None
    exported: dict[str, Any] | None = field(default=None)
    text_lines: int | None = None

    def bundle(self) -> dict[str, Any]:
        shown = [b for b in (self.exported, self.result) if b]
        if not shown:
            return {"text/plain": ""}
        if len(shown) == 1:
            return self._short(shown[0])
        text = "\n\n".join(b["text/plain"] for b in shown)
        if "text/markdown" not in shown[1]:  # an HTML result: the links stay in its text copy only
            return self._short({**shown[1], "text/plain": text})
        return self._short({"text/markdown": "\n\n".join(b["text/markdown"] for b in shown), "text/plain": text})

    def _short(self, bundle: dict[str, Any]) -> dict[str, Any]:
        lines = str(bundle.get("text/plain", "")).splitlines()
        if self.text_lines is None or len(lines) <= self.text_lines:
            return bundle
        more = len(lines) - self.text_lines
        return {**bundle, "text/plain": "\n".join([*lines[:self.text_lines],
                                                   f"… {more} more lines in the job's result files"])}
