"""Widget outputs are replaced by static snapshots once over, and all of them when the kernel shuts down."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _display_capture import capture_display
from _fake_job import FakeJob
from _wizard_support import CANARIES, CANARY_PASTED, clean_environ, make_project, tick

from synth_nb.notebook import live_output
from synth_nb.notebook.live_output import LiveOutput, freeze_all, install_shutdown_hook
from synth_nb.notebook.wizard import Wizard
from synth_nb.pipeline import actions

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(autouse=True)
def _no_live_outputs_of_other_tests() -> None:
    live_output._LIVE.clear()


class _Kernel:
    """The part of ipykernel's kernel the hook wraps: the handler tables, one entry of which it replaces."""

    def __init__(self, seen: list[str]) -> None:
        async def shutdown_request(stream: Any, ident: Any, parent: Any) -> None:
            seen.append(f"shutdown {parent['content']['restart']}")

        self.control_handlers = {"shutdown_request": shutdown_request, "kernel_info_request": print}
        self.shell_handlers = {"execute_request": print}


def test_a_live_output_is_replaced_once_by_its_snapshot_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = capture_display(monkeypatch)
    output = LiveOutput(lambda: {"text/plain": "over"}, name="t")
    output.freeze()  # never shown: nothing to replace
    output.show({WIDGET_VIEW: {"model_id": "m"}, "text/plain": ""})
    output.show({WIDGET_VIEW: {"model_id": "m"}, "text/plain": ""})  # shown twice (two cells), both replaced
    output.freeze()
    output.freeze()
    assert [item.shown[1:] for item in shown] == [[{"text/plain": "over"}]] * 2


async def test_kernel_shutdown_freezes_every_live_output_before_the_kernel_handles_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    shown = capture_display(monkeypatch)
    seen: list[str] = []
    outputs = [LiveOutput(lambda i=i: (seen.append(f"snapshot {i}"), {"text/plain": f"over {i}"})[1])  # type: ignore[misc]
               for i in range(2)]
    for output in outputs:
        output.show({WIDGET_VIEW: {"model_id": "m"}})
    outputs[0].freeze()  # over already: not replaced twice
    seen.clear()
    shell = type("Shell", (), {"kernel": _Kernel(seen)})()
    install_shutdown_hook(shell)
    install_shutdown_hook(shell)  # a second %load_ext wraps nothing twice
    handler = shell.kernel.control_handlers["shutdown_request"]
    await handler(None, [], {"content": {"restart": True}})
    assert seen == ["snapshot 1", "shutdown True"]
    assert [o.last for o in shown] == [{"text/plain": "over 0"}, {"text/plain": "over 1"}]
    assert not live_output._LIVE


def test_outside_ipykernel_there_is_nothing_to_wrap() -> None:
    install_shutdown_hook(object())
    freeze_all()


async def test_the_wizard_leaves_what_it_submitted_and_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = make_project(tmp_path / "nb")

    async def fake_send(batch: Any, *_: Any, **__: Any) -> list[Any]:
        return [FakeJob("prompt_learning", job_id="pl_snap1")]

    monkeypatch.setattr(actions, "send", fake_send)
    shown = capture_display(monkeypatch)
    wizard = Wizard(project, environ=clean_environ(), on_submitted=lambda jobs: None)
    wizard._handle_custom_msg({"type": "paste_secret", "name": "ENVIRONMENT_API_KEY", "value": CANARY_PASTED}, [])
    wizard._ipython_display_()
    (output,) = shown
    assert WIDGET_VIEW in output.last
    freeze_all()  # the kernel stops before anything was sent
    assert output.last["text/plain"] == "synth-nb wizard, closed when its kernel stopped: nothing was submitted from it."

    wizard._ipython_display_()  # shown again, then submitted
    tick(wizard, "gepa.toml")
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert wizard.submit_task is not None
    await wizard.submit_task
    snapshot = shown[1].last  # replaced as it submitted: the wizard is over, its kernel still runs
    assert WIDGET_VIEW not in snapshot and wizard.output.frozen
    assert "gepa.toml (prompt_learning) → pl_snap1" in snapshot["text/plain"]
    assert "<strong class='synth-job-id'>pl_snap1</strong>" in snapshot["text/html"]
    assert "To send it again: %synth_train --rerun pl_snap1; to change something first: " \
           "%synth_train --fork pl_snap1" in snapshot["text/plain"]
    assert "<summary>What was sent (secrets masked)</summary>" in snapshot["text/html"]
    assert "gepa.toml" in snapshot["text/plain"].split("--fork pl_snap1")[1]  # the masked payload preview
    assert not any(c in json.dumps(snapshot) for c in CANARIES)
