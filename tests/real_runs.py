"""Real jobs on an embedded local backend, run once per test process and shared by the explorer and
comparison tests: two GEPA runs with different seeds and budgets and one MIPRO run on the bundled banking
task app (scored by the deterministic keyword policy, so each takes seconds), plus an SFT and an RL run
replayed from the bundled recordings. Every job was submitted from a config file through the pipeline (or
recorded in the registry by hand, for the replays), so the folder's registry knows them all.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minimal_configs import BANKING_MIPRO, banking_gepa, with_values

from synth_nb import pipeline
from synth_nb.backend import normalize_backend_url
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job, JobRecord, JobRegistry
from synth_nb.pipeline import SecretSources, Target


@dataclass
class RealRuns:
    folder: Path
    backend: Any
    task_app: Any
    jobs: dict[str, Job] = field(default_factory=dict)

    @property
    def api_key(self) -> str:
        return str(self.backend.api_key)

    def registry(self) -> JobRegistry:
        return JobRegistry(self.folder)


async def _submit(runs: RealRuns, target: Target, name: str, text: str) -> Job:
    path = runs.folder / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    sources = SecretSources(environ={"ENVIRONMENT_API_KEY": runs.task_app.api_key}, cwd=runs.folder)
    overrides = pipeline.build_overrides({"task_url": runs.task_app.url}, target)
    prepared = pipeline.prepare_config(path, overrides=overrides, target=target, sources=sources)
    assert prepared.ok and prepared.plan is not None, prepared.error
    return await pipeline.submit_plan(prepared.plan, target, runs.api_key, registry=runs.registry(), poll_interval=0.5)


async def _replay(runs: RealRuns, target: Target, flow: str) -> Job:
    client = AsyncSynthClient(target.url, runs.api_key)
    endpoints = get_flow(flow).endpoints
    doc = await client.create_job(endpoints, {"metadata": {"local_executor": "replay", "recording": flow}})
    job_id = str(doc.get("id") or doc.get("job_id"))
    if endpoints.start:
        await client.start(endpoints, job_id)
    runs.registry().record(JobRecord(job_id=job_id, flow=flow, backend_url=target.url))
    return Job(job_id, flow, client, endpoints=get_flow(flow).endpoints, poll_interval=0.5)


async def _run_all(runs: RealRuns) -> None:
    target = Target(normalize_backend_url(runs.backend.url), runs.api_key)
    jobs = {
        "gepa_a": await _submit(runs, target, "gepa_a", banking_gepa(budget=200, rng_seed=0)),
        "gepa_b": await _submit(runs, target, "gepa_b", banking_gepa(budget=150, rng_seed=1)),
        # five instructions for six trials: some are never tried or never fully evaluated (rejected proposals)
        "mipro": await _submit(runs, target, "mipro", with_values(BANKING_MIPRO, max_instructions=5)),
        "sft": await _replay(runs, target, "sft"),
        "rl": await _replay(runs, target, "rl"),
    }
    await asyncio.gather(*(job.wait(timeout=600) for job in jobs.values()))  # a guard, not a speed check
    for job in jobs.values():
        assert job.status == "succeeded", (job.id, job.status, job.status_doc.get("error"))
        await job.client.aclose()
    runs.jobs = jobs


@functools.cache
def real_runs() -> RealRuns:
    """The jobs (started on first use, stopped when the test process exits)."""
    from synth_nb.local import start_backend
    from synth_nb.local.examples import start_task_app

    folder = Path(tempfile.mkdtemp(prefix="synth-nb-real-runs-"))
    task_app = start_task_app("banking")
    backend = start_backend(executor_options={"replay": {"speed": 40}})
    runs = RealRuns(folder, backend, task_app)

    def stop() -> None:
        backend.stop()
        task_app.stop()
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)
    asyncio.run(_run_all(runs))
    return runs
