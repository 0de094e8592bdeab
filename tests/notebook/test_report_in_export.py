"""A finished panel keeps the job's report in the saved notebook: its status output holds the report's fragment,
folded, so nbconvert's HTML export (and its sanitized export, whose allow-list escapes headings and header cells
into text: the words stay) still shows the report's content with no kernel: how it ended, the figures beside what they were measured on, the
final block and the config section (the explorer is in ``report.html`` and one call away in the notebook).

The job is one of the shared real runs (``real_runs``), followed to its end by a real panel in this process.
"""

from __future__ import annotations

import asyncio
from html.parser import HTMLParser
from typing import Any

import nbformat
import pytest
from _display_capture import capture_display
from real_runs import real_runs

from synth_nb.notebook.panel import MonitorPanel


class Shown(HTMLParser):
    """An exported page's text, scripts and styles left out."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text, self._skip = "", False
        self.feed(markup)
        self.text = " ".join(self.text.split())

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self._skip = tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip = False

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text += " " + data


def test_an_exported_notebook_shows_the_finished_panels_report(monkeypatch: pytest.MonkeyPatch) -> None:
    from nbconvert import HTMLExporter

    job = real_runs().jobs["gepa_a"]
    outputs = capture_display(monkeypatch)

    async def follow() -> None:
        panel = MonitorPanel(job, tick=0.05, headless=True).display()
        await asyncio.wait_for(panel.wait(), 120)

    asyncio.run(follow())
    saved = [nbformat.v4.new_output("display_data", data=output.last) for output in outputs.by_id.values()]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%synth_train --attach " + job.id,
                                                                         outputs=saved)])
    nbformat.validate(notebook)
    status = saved[0]["data"]["text/html"]
    assert "<details class='synth-report-folded'>" in status and "class='synth-report'" in status

    ending = job.ending()
    for sanitize in (False, True):
        page = Shown(HTMLExporter(sanitize_html=sanitize).from_notebook_node(notebook)[0])
        assert "The job's report: figures, estimate, final block, config and plan" in page.text
        for words in (f"Report of job {job.id}", ending.headline(job.id), "Why it stopped", ending.stop.text,
                      "Headline figures", *(g.measured_on for g in ending.gains), "Estimate beside the actual",
                      "Final block", "Each metric's last value", "Config and plan (masked)"):
            assert words in page.text, (sanitize, words)
