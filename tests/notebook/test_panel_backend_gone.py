"""A panel whose backend stops answering says so while its client retries, and turns Cancel off."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job
from synth_nb.local.shared import ensure_backend, stop_backend
from synth_nb.notebook.controls import PanelControls
from synth_nb.notebook.panel import MonitorPanel


def test_a_panel_whose_backend_is_gone_says_so_and_disables_cancel(tmp_path: Path) -> None:
    backend = ensure_backend(tmp_path / "data")

    async def follow() -> MonitorPanel:
        client = AsyncSynthClient(backend.url + "/api", backend.api_key)
        sft = get_flow("sft").endpoints
        body = {"metadata": {"local_executor": "replay", "recording": "sft", "replay_speed": 0.05}}
        doc = await client.create_job(sft, body)
        await client.start(sft, doc["id"])
        job = Job(doc["id"], "sft", client, endpoints=get_flow("sft").endpoints, poll_interval=0.2)
        panel = MonitorPanel(job, tick=0.1)
        panel.row.controls = PanelControls(on_cancel=panel.request_cancel, on_show_all=panel.set_show_all)
        task = asyncio.ensure_future(panel.run())
        while job.status != "running":
            await asyncio.sleep(0.1)
        assert panel.unreachable is None and not panel.controls.cancel.disabled
        os.kill(backend.pid, signal.SIGKILL)  # gone at once, as when its process or machine dies
        while panel.unreachable is None:
            await asyncio.sleep(0.1)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await client.aclose()
        return panel

    try:
        panel = asyncio.run(asyncio.wait_for(follow(), timeout=300))
    finally:
        stop_backend(tmp_path / "data")  # the info file it left is stale now: removed
    assert panel.unreachable is not None and panel.unreachable.startswith("backend unreachable since ")
    assert panel.unreachable.endswith("retrying…")
    assert "backend unreachable since" in panel.status_bundle()["text/html"]
    controls = panel.controls
    assert controls is not None and controls.cancel.disabled and controls.cancel.description == "Backend unreachable"
    controls.backend_unreachable(None)  # answering again: Cancel is back
    assert not controls.cancel.disabled and controls.cancel.description == "Cancel job"
