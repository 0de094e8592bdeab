"""Every notebook output and file made from a hostile backend's text (``tests/hostile_text_backend.py``, a real
HTTP server whose strings are all markup): the monitor panel's status, events and summary, ``summary.md``,
the SFT and RL results, the explorer, the comparison, the jobs table and the pre-flight card. Rendered as
Jupyter renders them (Markdown through markdown-it with raw HTML on), none holds an element, attribute or
link the backend wrote, and each shows the backend's text as sent."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from _display_capture import capture_display
from hostile_text_backend import (
    FENCE_BREAKER,
    KEY,
    PAYLOADS,
    PL_JOB,
    RL_JOB,
    SFT_JOB,
    HostileBackend,
    hostile,
    made,
)
from hostile_text_backend import serve_hostile_jobs as serve

import synth_nb
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import flow_named_in, get_flow, guess_flow
from synth_nb.flows.prompt_learning.summary import write_summary
from synth_nb.job import Job, JobRecord
from synth_nb.job import attach as attach_job
from synth_nb.notebook.artifacts import artifact_bundle
from synth_nb.notebook.job_table import jobs_bundle
from synth_nb.notebook.panel import MonitorPanel
from synth_nb.pipeline.card import PreflightCard


@pytest.fixture(scope="module")
def backend() -> Iterator[HostileBackend]:
    with serve() as running:
        yield running


def follow_in_panels(backend: HostileBackend) -> dict[str, Job]:
    """Each hostile job attached to and followed to its end in a displayed panel, by id."""

    async def run() -> dict[str, Job]:
        jobs: dict[str, Job] = {}
        async with AsyncSynthClient(backend.url, KEY) as client:
            for job_id in (PL_JOB, SFT_JOB, RL_JOB):
                flows = {name: get_flow(name).endpoints for name in guess_flow(job_id)}
                job = await attach_job(job_id, client, flows, kind_of=flow_named_in, poll_interval=0.2)
                panel = MonitorPanel(job, tick=0.05).display()
                await asyncio.wait_for(panel.wait(), 120)
                await job.stop_monitoring()
                jobs[job_id] = job
        return jobs

    return asyncio.run(run())


def test_every_output_shows_the_backends_text_and_runs_none_of_it(backend: HostileBackend, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    outputs = capture_display(monkeypatch)
    jobs = follow_in_panels(backend)
    shown = [bundle for output in outputs.by_id.values() for bundle in output.shown if isinstance(bundle, dict)]
    assert len(shown) > 6
    for bundle in shown:
        assert made(bundle).found == [], bundle
    panel_text = " ".join(made(bundle).text for bundle in shown)
    for name in ("img", "link", "script", "image", "autolink", "svg", "details", "tick", "math"):
        assert PAYLOADS[name] in panel_text, name
    assert FENCE_BREAKER in panel_text  # the prompt's own block holds it whole

    pl, sft, rl = jobs[PL_JOB], jobs[SFT_JOB], jobs[RL_JOB]
    assert (sft.flow, rl.flow) == ("sft", "rl")
    summary = write_summary(pl, tmp_path).read_text(encoding="utf-8")  # summary.md
    page = made({"text/markdown": summary})
    assert page.found == []
    assert f"Policy {hostile('img', 'link')} ({hostile('script')})" in " ".join(page.text.split())
    assert f"Error: {hostile()}" in " ".join(page.text.split())
    for bundle in (artifact_bundle(sft), artifact_bundle(rl)):
        assert bundle is not None and made(bundle).found == []
        assert hostile("img") in made(bundle).text
    explorer = pl.explorer()
    for bundle in ({"text/html": explorer.to_html()}, {"text/markdown": explorer.to_markdown()}):
        assert made(bundle).found == [] and PAYLOADS["tick"] in made(bundle).text
    comparison = synth_nb.compare([pl, sft, rl])
    for bundle in ({"text/html": comparison.to_html()}, {"text/markdown": comparison.to_markdown()}):
        assert made(bundle).found == [] and PL_JOB in made(bundle).text


def test_the_jobs_table_and_the_card_show_backend_text_as_text(backend: HostileBackend) -> None:
    record = JobRecord(PL_JOB, "prompt_learning", backend.url, algorithm=hostile("img"), status=hostile("script"),
                       config_path=f"/x/{PAYLOADS['svg']}.toml")
    table = made(jobs_bundle([record]))
    assert table.found == [] and hostile("script") in table.text and hostile("img") in table.text
    card = PreflightCard(Path("gepa.toml"), backend=hostile("link"), flow="prompt_learning", problem=hostile(),
                         facts=(hostile("svg"),), warnings=[FENCE_BREAKER])
    shown = made({"text/html": card._repr_html_()})
    assert shown.found == [] and hostile() in shown.text and FENCE_BREAKER in shown.text
