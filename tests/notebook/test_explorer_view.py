"""The explorer and the comparison in a notebook: one display output, kept current while a job runs, and
``%synth_train --compare``.

Jobs are real ones on the embedded backend (``real_runs``); the live test replays the bundled GEPA
recording (the hosted backend's event shapes) slowly enough to be seen arriving.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from _display_capture import capture_display
from real_runs import real_runs

from synth_nb.client import AsyncSynthClient
from synth_nb.comparison import Comparison
from synth_nb.flows import get_flow
from synth_nb.job import Job
from synth_nb.notebook.explorer_view import show_explorer


@pytest.fixture()
def outputs(monkeypatch: pytest.MonkeyPatch) -> Any:
    return capture_display(monkeypatch)


def test_a_finished_job_shows_one_static_explorer(outputs: Any) -> None:
    job = real_runs().jobs["gepa_a"]
    view = show_explorer(job)
    [output] = outputs
    bundle = output.last
    assert view.frames == 1 and len(output.shown) == 1  # nothing left to follow
    assert set(bundle) == {"text/html", "text/plain"}
    assert "class='synth-explorer'" in bundle["text/html"]
    assert bundle["text/plain"] == job.explorer().summary_line()
    ex = job.explorer()
    for c in ex.candidates:  # every Pareto point names the prompt of its candidate, which is in the output
        assert f"-c{c.index}" in bundle["text/html"]
    assert bundle["text/html"].count('<g class="point" data-candidate=') >= 2 * len(ex.candidates)  # one per plot
    svgs = re.findall(r"<svg.*?</svg>", bundle["text/html"], flags=re.S)
    assert len(svgs) == 2 and not any("<a " in svg for svg in svgs)  # front ends rewrite link hrefs; SVG's are read-only
    assert "Baseline → best prompt" in bundle["text/html"] and "<ins>" in bundle["text/html"]


async def test_a_running_job_is_redrawn_until_it_ends(outputs: Any) -> None:
    runs = await asyncio.to_thread(real_runs)  # the first call runs its jobs with asyncio.run: not on this loop
    client = AsyncSynthClient(runs.backend.url + "/api", runs.api_key)
    endpoints = get_flow("prompt_learning").endpoints
    doc = await client.create_job(endpoints, {"algorithm": "gepa", "metadata": {
        "local_executor": "replay", "recording": "gepa", "replay_speed": 6}})
    job = Job(str(doc.get("id") or doc.get("job_id")), "prompt_learning", client,
              endpoints=get_flow("prompt_learning").endpoints, algorithm="gepa", poll_interval=0.2)
    try:
        view = show_explorer(job, interval=0.2)
        frames = await asyncio.wait_for(view.wait(), 120)  # a guard against hanging, not a speed check
    finally:
        await client.aclose()
    [output] = outputs
    assert job.done and frames == len(output.shown) >= 3
    plain = [b["text/plain"] for b in output.shown]
    assert plain[-1] == job.explorer().summary_line() and "20 proposals" in plain[-1]
    assert any("has not finished" in b["text/html"] for b in output.shown[:-2])
    assert "has not finished" not in output.shown[-1]["text/html"]


def test_the_magic_compares_runs_by_id(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = real_runs()
    monkeypatch.setenv("SYNTH_API_KEY", runs.api_key)
    monkeypatch.setitem(ip.user_ns, "__session__", str(runs.folder / "compare.ipynb"))
    a, sft = runs.jobs["gepa_a"], runs.jobs["sft"]
    result = ip.run_line_magic("synth_train", f"--compare {a.id} {sft.id}")
    assert isinstance(result, Comparison) and [r.job_id for r in result.runs] == [a.id, sft.id]
    bundle = result._repr_mimebundle_()
    assert f"gepa_a.toml · {a.id}" in bundle["text/html"] and "train loss" in bundle["text/plain"]
    # no ids: the latest runs of the newest job's flow (the RL replay, here), the others named in a note
    latest = ip.run_line_magic("synth_train", "--compare")
    assert [r.job_id for r in latest.runs] == [runs.jobs["rl"].id]
    assert all(job.id in latest.problems[0] for name, job in runs.jobs.items() if name != "rl")


def _rollout_recording(path: Any, steps: int = 4) -> Any:
    """An RL recording whose rollouts arrive over about a second and a half: a group of 2 per step."""
    import json

    lines = [{"t": 0, "kind": "meta", "payload": {"flow": "rl"}}, {"t": 0, "kind": "status", "payload": {"status": "running"}}]
    for step in range(1, steps + 1):
        for member in range(2):
            lines.append({"t": 0.4 * step, "kind": "event", "payload": {
                "type": "rl.rollout.sampled", "message": f"step {step}", "data": {
                    "step": step, "phase": "train", "seed": step, "member": member, "reward": 0.25 * member + 0.1 * step,
                    "prompt": "user: Only digits.", "completion": f"<b>{step}{member}</b>", "completion_tokens": 3}}})
    lines.append({"t": 0.4 * steps + 0.2, "kind": "status", "payload": {"status": "succeeded"}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


async def test_the_samples_view_is_redrawn_as_rollouts_arrive(outputs: Any, tmp_path: Any) -> None:
    from synth_nb.local import start_backend
    from synth_nb.notebook.explorer_view import show_samples

    recording = _rollout_recording(tmp_path / "rollouts.jsonl")
    backend = await asyncio.to_thread(start_backend, recordings_dir=str(tmp_path))
    client = AsyncSynthClient(backend.url + "/api", backend.api_key)
    try:
        endpoints = get_flow("rl").endpoints
        doc = await client.create_job(endpoints, {"metadata": {"local_executor": "replay", "recording": str(recording)}})
        job = Job(str(doc.get("id") or doc.get("job_id")), "rl", client, endpoints=endpoints, poll_interval=0.1)
        if endpoints.start:
            await client.start(endpoints, job.id)
        view = show_samples(job, interval=0.2)
        frames = await asyncio.wait_for(view.wait(), 120)  # a guard against hanging, not a speed check
    finally:
        await client.aclose()
        await asyncio.to_thread(backend.stop)
    [output] = outputs
    assert job.done and frames == len(output.shown) >= 2
    assert output.shown[-1]["text/plain"] == f"RL rollouts of job {job.id}: 8 sampled, steps 1–4"
    assert "Best of step 4 (by reward)" in output.shown[-1]["text/html"]
    assert "&lt;b&gt;41&lt;/b&gt;" in output.shown[-1]["text/html"] and "<b>41" not in output.shown[-1]["text/html"]
    assert any(f"{n} sampled" in b["text/plain"] for b in output.shown[:-1] for n in range(8))  # drawn early
