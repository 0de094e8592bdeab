"""The panel's button row as one output: live while something can be pressed, then text of its last state."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest
from _display_capture import capture_display

from synth_nb.notebook.panel_row import PanelRow

WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture()
def outputs(monkeypatch):
    return capture_display(monkeypatch)


def _row(heads: list[str]) -> PanelRow:
    row = PanelRow("job_1", lambda: heads[-1])
    cancels: list[int] = []
    row.show(on_cancel=lambda: cancels.append(1), on_show_all=lambda _: None, show_all=False)
    return row


def test_a_row_without_the_focus_becomes_text_at_once_with_its_head_and_buttons(outputs) -> None:
    row = _row(["Job job_1: succeeded."])
    [shown] = outputs
    assert WIDGET in shown.last and shown.last["text/plain"] == ""  # no widget repr in a saved notebook
    assert row.controls is not None and "re-attach from a kernel: %synth_train --attach job_1" in row.gone_notice()
    row.controls.job_finished()
    row.end(lambda coro: pytest.fail("nothing waits for the focus"))
    assert WIDGET not in shown.last
    assert shown.last["text/plain"].splitlines() == ["Job job_1: succeeded.", "  Job finished: off",
                                                      "  Show all events: not pressed"]


def test_a_row_holding_the_focus_becomes_text_once_the_front_end_says_the_focus_left(outputs) -> None:
    row = _row(["Job job_1: cancelled."])
    [shown] = outputs
    assert row.controls is not None
    row.controls.message._front_end_message(None, {"event": "focus", "held": True}, [])
    spawned: list[Coroutine[Any, Any, None]] = []
    row.end(spawned.append)
    assert WIDGET in shown.last and row.controls.message.release_when_unfocused  # the focus is not dropped
    row.controls.message._front_end_message(None, {"event": "focus", "held": False}, [])
    row.controls.message._front_end_message(None, {"event": "unfocused"}, [])
    [freeze] = spawned  # run on the panel's loop: the message may come on any thread
    asyncio.run(freeze)
    assert shown.last["text/plain"].startswith("Job job_1: cancelled.")
