"""``synth_nb.notebook.kernel_loop``: callbacks from any thread end up on the captured loop."""

from __future__ import annotations

import asyncio
import threading

from synth_nb.notebook.kernel_loop import KernelLoop, background_loop, run_sync


async def test_call_soon_from_another_thread_runs_on_the_loop_thread() -> None:
    kernel = KernelLoop.capture()
    assert kernel.loop is asyncio.get_running_loop()
    seen: list[str] = []
    done = asyncio.Event()

    def callback(tag: str) -> None:
        seen.append(f"{tag}:{threading.current_thread().name}")
        done.set()

    thread = threading.Thread(target=kernel.call_soon, args=(callback, "cb"), name="comm-subshell")
    thread.start()
    thread.join()
    await asyncio.wait_for(done.wait(), 5)
    assert seen == [f"cb:{threading.current_thread().name}"]


async def test_call_soon_on_the_loop_thread_runs_immediately() -> None:
    kernel = KernelLoop.capture()
    seen: list[int] = []
    kernel.call_soon(seen.append, 1)
    assert seen == [1]


async def test_spawn_from_a_thread_returns_a_thread_safe_future() -> None:
    kernel = KernelLoop.capture()

    async def work() -> str:
        await asyncio.sleep(0)
        return "ok"

    futures = []
    thread = threading.Thread(target=lambda: futures.append(kernel.spawn(work())))
    thread.start()
    thread.join()
    assert await asyncio.wrap_future(futures[0]) == "ok"


async def test_spawn_on_the_loop_thread_propagates_exceptions() -> None:
    kernel = KernelLoop.capture()

    async def boom() -> None:
        raise ValueError("bad")

    future = kernel.spawn(boom())
    try:
        await asyncio.wrap_future(future)
    except ValueError as exc:
        assert str(exc) == "bad"
    else:  # pragma: no cover - the assertion below documents the expectation
        raise AssertionError("exception not propagated")


def test_capture_without_a_running_loop_uses_the_background_loop() -> None:
    kernel = KernelLoop.capture()
    assert kernel.loop is background_loop()
    assert not kernel.on_loop_thread()


async def test_run_sync_blocks_on_the_background_loop_even_inside_a_running_loop() -> None:
    async def where() -> bool:
        return asyncio.get_running_loop() is background_loop()

    assert run_sync(where()) is True
