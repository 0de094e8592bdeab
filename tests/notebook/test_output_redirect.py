"""``synth_nb.notebook.output_redirect``: panel outputs land in the wizard's Output widget, kernel-side."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from synth_nb.notebook.output_redirect import OutputRedirect, show_jobs_in


def msg(kind: str, text: str, display_id: str | None = None) -> dict[str, Any]:
    transient = {"display_id": display_id} if display_id else {}
    return {"header": {"msg_type": kind}, "content": {"data": {"text/plain": text}, "metadata": {},
                                                      "transient": transient}}


def test_new_outputs_are_appended_only_while_capturing() -> None:
    out = SimpleNamespace(outputs=())
    hook = OutputRedirect(out)
    assert hook(msg("display_data", "elsewhere")) is not None
    hook.capturing = True
    assert hook(msg("display_data", "status", "d1")) is None
    assert hook(msg("display_data", "controls")) is None
    hook.capturing = False
    assert [o["data"]["text/plain"] for o in out.outputs] == ["status", "controls"]
    assert hook(msg("stream", "x")) is not None


def test_in_place_updates_replace_their_own_entry_and_leave_others_alone() -> None:
    out = SimpleNamespace(outputs=())
    hook = OutputRedirect(out)
    hook.capturing = True
    hook(msg("display_data", "status 0", "d1"))
    hook(msg("display_data", "chart 0", "d2"))
    hook.capturing = False
    assert hook(msg("update_display_data", "chart 1", "d2")) is None
    assert [o["data"]["text/plain"] for o in out.outputs] == ["status 0", "chart 1"]
    foreign = msg("update_display_data", "other cell", "d9")
    assert hook(foreign) is foreign


def test_without_an_output_widget_panels_are_displayed_normally() -> None:
    shown: list[Any] = []
    panels = show_jobs_in(None, ["job-a", "job-b"], show=lambda job, wait: shown.append((job, wait)) or job)
    assert panels == ["job-a", "job-b"] and shown == [("job-a", False), ("job-b", False)]
