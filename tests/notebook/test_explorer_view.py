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
