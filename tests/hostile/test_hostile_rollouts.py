"""A backend's rollout text never becomes terminal control or markup: ``attach --rollouts`` shows it escaped,
and the notebook view (``job.rollouts()``) shows it as text."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pandas as pd
from hostile_backend import API_KEY, HOSTILE_TEXT, HostileBackend, HostileJob, good_id
from hostile_sandbox import assert_clean, synth_nb

from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job

MARKUP = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def _rollout_job() -> HostileJob:
    text = HOSTILE_TEXT + MARKUP
    data = {"step": 1, "phase": "train", "seed": 7, "member": 0, "prompt": f"user: {text}",
            "completion": f"reply\n{text}", "reward": 0.5, "advantage": 1.0, "completion_tokens": 3,
            "reward_components": {f"part{text}": 0.5, "bad": "not a number"}}
    events = [{"seq": 1, "type": "rl.rollout.sampled", "level": "info", "message": f"rollout {text}", "data": data},
              {"seq": 2, "type": "rl.rollout.sampled", "level": "info", "message": "x",
               "data": {"step": "two", "prompt": ["not", "text"], "reward": "high"}}]  # fields of the wrong type
    return HostileJob(good_id(), {"status": "succeeded"}, events)


def test_attach_rollouts_prints_the_rollout_text_escaped(hostile: HostileBackend, work: Path) -> None:
    job = hostile.add(_rollout_job())
    ran = synth_nb(work, "attach", job.id, "--backend", hostile.url, "--flow", "rl", "--rollouts")
    assert ran.code == 0, ran.text
    assert_clean(ran)
    assert "\\x1b]0;pwned-title\\x07" in ran.out and "reply" in ran.out and "seed 7" in ran.out
    assert "2 sampled" in ran.out


def test_the_rollout_view_shows_the_text_as_text(hostile: HostileBackend) -> None:
    hostile_job = hostile.add(_rollout_job())

    async def rebuilt() -> Job:
        client = AsyncSynthClient(f"{hostile.url}/api", API_KEY)
        job = Job(hostile_job.id, "rl", client, endpoints=get_flow("rl").endpoints)
        await job.refresh()
        await client.aclose()
        return job

    job = asyncio.run(rebuilt())
    html = job.rollouts().to_html()
    assert "<img" not in html and "alert(2)</script>" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert len(re.findall(r"<script>", html)) == 1  # the view's own
    frame = job.rollouts_df()
    assert len(frame) == 2 and frame.loc[0, "step"] == 1 and frame.loc[0, "seed"] == 7
    assert pd.isna(frame.loc[1, "step"]) and pd.isna(frame.loc[1, "reward"]) and frame.loc[1, "prompt"] == ""
    [part] = frame.loc[0, "reward_components"]  # the part that is not a number is left out
    assert part.startswith("part\x1b]0;") and len(part) == 64  # a name is cut
