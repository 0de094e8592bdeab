"""The notebook's monitor panel on hosted timeline and linked-job shapes replayed over HTTP: its status output
(HTML and text, as the saved notebook keeps it) shows the job's phases and the job its status links to, in
the words ``synth-nb attach`` prints them; headless, ``%synth_train --attach`` prints the same lines."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from replay_server import Replay, serve

from synth_nb.client import AsyncSynthClient
from synth_nb.flows import flow_named_in, get_flow, guess_flow
from synth_nb.job import Job
from synth_nb.job import attach as attach_job
from synth_nb.notebook.panel import MonitorPanel

KEY = "sk_replay_0000000000000000wxyz"
LINKED = "job_5d4c3b2a1f0e"


@pytest.fixture
def replay(request: pytest.FixtureRequest) -> Iterator[Replay]:
    with serve(request.param) as running:
        yield running


class StatusOutputs:
    """Every bundle the cell's display-id outputs showed, by display id, in order."""

    def __init__(self) -> None:
        self.shown: dict[str, list[dict[str, Any]]] = {}

    def display(self, obj: Any, raw: bool = False, display_id: Any = None, **_: Any) -> None:
        if isinstance(display_id, str):
            self.shown[display_id] = [obj]

    def update_display(self, obj: Any, *, display_id: str, **_: Any) -> None:
        self.shown[display_id].append(obj)


@pytest.fixture
def outputs(monkeypatch: pytest.MonkeyPatch) -> StatusOutputs:
    import IPython.display

    recorded = StatusOutputs()
    monkeypatch.setattr(IPython.display, "display", recorded.display)
    monkeypatch.setattr(IPython.display, "update_display", recorded.update_display)
    return recorded


async def follow_in_panel(replay: Replay, outputs: StatusOutputs) -> list[dict[str, Any]]:
    """Attach to the replayed job (its job still running), follow it in a displayed panel to its end; every
    status bundle the panel showed, the first one what it showed on being displayed."""
    async with AsyncSynthClient(replay.url, KEY) as client:
        flows = {name: get_flow(name).endpoints for name in guess_flow(replay.job_id)}
        job = await attach_job(replay.job_id, client, flows, kind_of=flow_named_in, poll_interval=0.2)
        panel = MonitorPanel(job, tick=0.05).display()
        await asyncio.wait_for(panel.wait(), 120)
        await job.stop_monitoring()
        if isinstance(job.linked, Job):
            await job.linked.stop_monitoring()
    return outputs.shown[panel.outputs.status]


def lines_of(bundle: dict[str, Any]) -> list[str]:
    return str(bundle["text/plain"]).splitlines()


@pytest.mark.parametrize("replay", ["sft_timeline_phases"], indirect=True)
async def test_the_panel_shows_the_phases_as_they_come(replay: Replay, outputs: StatusOutputs) -> None:
    shown = await follow_in_panel(replay, outputs)
    assert "phases: queued → training: 8 x H100" in lines_of(shown[0])  # what the attach read: training so far
    final = shown[-1]
    assert "phases: queued → training → succeeded" in lines_of(final)  # the entry without a phase is left out
    assert "<div class='synth-phases'>phases: queued → training → succeeded</div>" in final["text/html"]
    assert "data-status='succeeded'" in final["text/html"]


@pytest.mark.parametrize("replay", ["rl_timeline_under_learning"], indirect=True)
async def test_the_newest_phase_says_its_message(replay: Replay, outputs: StatusOutputs) -> None:
    shown = await follow_in_panel(replay, outputs)
    assert "phases: queued → rollouts → failed: task app unreachable" in lines_of(shown[-1])
    assert "<div class='synth-phases'>phases: queued → rollouts → failed: task app unreachable</div>" \
           in shown[-1]["text/html"]


@pytest.mark.parametrize("replay", ["rl_linked_training_job"], indirect=True)
async def test_the_panel_names_the_linked_job_and_how_to_follow_it_alone(replay: Replay,
                                                                         outputs: StatusOutputs) -> None:
    shown = await follow_in_panel(replay, outputs)
    live = shown[0]  # the RL job still running: the training job is followed alongside
    assert "status=running" in live["text/plain"]
    followed = [line for line in lines_of(live) if line.startswith(f"linked job {LINKED} ")]
    assert len(followed) == 1 and followed[0].startswith(f"linked job {LINKED} (sft, ")
    assert followed[0].endswith(f"events so far) is followed too (%synth_train --attach {LINKED} follows it alone)")
    assert "<div class='synth-linked'>linked job " in live["text/html"]
    final = shown[-1]
    assert f"linked job: {LINKED} (sft): succeeded, 3 events, 2 metrics (%synth_train --attach {LINKED})" \
           in lines_of(final)
    assert "linked last metrics: train.loss=0.7100 (step 2)" in lines_of(final)
    assert f"<div class='synth-linked'>linked job: {LINKED} (sft): succeeded, 3 events, 2 metrics " \
           f"(%synth_train --attach {LINKED})</div>" in final["text/html"]
    assert "[2] rl.train.started" in final["text/plain"]  # the RL job's own events, not the training job's


@pytest.mark.parametrize("replay", ["rl_linked_job_missing"], indirect=True)
async def test_a_linked_job_the_backend_does_not_know_is_named_as_not_followable(replay: Replay,
                                                                                 outputs: StatusOutputs) -> None:
    shown = await follow_in_panel(replay, outputs)
    final = shown[-1]
    named = [line for line in lines_of(final) if line.startswith("linked job")]
    assert len(named) == 1
    assert named[0].startswith("linked job job_ffffeeeedddd could not be followed: job job_ffffeeeedddd was not "
                               "found on")
    assert "<div class='synth-linked'>linked job job_ffffeeeedddd could not be followed" in final["text/html"]
    assert KEY not in final["text/plain"] + final["text/html"]


@pytest.fixture
def headless(tmp_path: Path, ip: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The test's IPython shell in a folder of its own, no widget front end, the replay's key in the environment."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYNTH_API_KEY", KEY)
    monkeypatch.setenv("SYNTH_NB_WIDGETS", "0")
    monkeypatch.delenv("SYNTH_BACKEND_OVERRIDE", raising=False)
    ip.user_ns["__session__"] = str(tmp_path / "train.ipynb")
    yield ip
    ip.user_ns.pop("__session__", None)


@pytest.mark.parametrize("replay", ["rl_linked_training_job"], indirect=True)
def test_attach_headless_prints_the_linked_job(replay: Replay, headless: Any,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    job = headless.run_line_magic("synth_train", f"--attach {replay.job_id} --backend {replay.url}")
    out = capsys.readouterr().out
    assert job.status == "succeeded"
    assert f"linked job: {LINKED} (sft): succeeded, 3 events, 2 metrics (%synth_train --attach {LINKED})" in out
    assert "linked last metrics: train.loss=0.7100 (step 2)" in out


@pytest.mark.parametrize("replay", ["sft_timeline_phases"], indirect=True)
def test_attach_headless_prints_the_phases_and_with_all_events_each_one(replay: Replay, headless: Any,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    headless.run_line_magic("synth_train", f"--attach {replay.job_id} --backend {replay.url} --all-events")
    out = capsys.readouterr().out
    connecting, *lines = out.splitlines()
    assert connecting == f"connecting to {replay.url}/api …"  # said before the first request
    assert lines[:2] == ["  timeline=queued", "  timeline=training: 8 x H100"]  # as `synth-nb attach` words them
    assert "phases: queued → training → succeeded" in lines
