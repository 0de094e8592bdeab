"""``synth_nb.notebook.output_redirect``: tasks started from a button press run in the wizard cell's context."""

from __future__ import annotations

import asyncio
import contextvars

from synth_nb.notebook.output_redirect import CellContext

#: stands in for ipykernel's parent-header context variable
PARENT: contextvars.ContextVar[str] = contextvars.ContextVar("parent", default="comm message")


async def _parent_later() -> str:
    await asyncio.sleep(0)
    return PARENT.get()


async def test_tasks_see_the_captured_cell_and_leave_the_caller_alone() -> None:
    cell = CellContext()
    assert not cell.captured
    token = PARENT.set("cell 3")
    cell.capture()
    PARENT.reset(token)
    loop = asyncio.get_running_loop()
    first, second = cell.create_task(loop, _parent_later()), cell.create_task(loop, _parent_later())
    assert await asyncio.gather(first, second) == ["cell 3", "cell 3"]  # two at once, each its own copy
    assert cell.captured and PARENT.get() == "comm message"


async def test_the_latest_display_wins_and_nothing_captured_means_the_callers_context() -> None:
    cell = CellContext()
    loop = asyncio.get_running_loop()
    assert await cell.create_task(loop, _parent_later()) == "comm message"
    for name in ("cell 1", "cell 2"):
        token = PARENT.set(name)
        cell.capture()
        PARENT.reset(token)
    assert await cell.create_task(loop, _parent_later()) == "cell 2"


def test_calls_run_in_the_captured_cell_without_changing_the_callers_context() -> None:
    cell = CellContext()
    assert cell.run(PARENT.get) == "comm message"
    token = PARENT.set("cell 7")
    cell.capture()
    PARENT.reset(token)
    assert cell.run(PARENT.get) == "cell 7" and PARENT.get() == "comm message"
