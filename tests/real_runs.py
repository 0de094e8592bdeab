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

from synth_nb import pipeline
from synth_nb.backend import normalize_backend_url
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job, JobRecord, JobRegistry
from synth_nb.pipeline import SecretSources, Target

PROMPT = """\
[prompt_learning.initial_prompt]
id = "banking_intents"
name = "Banking intent classification"

[[prompt_learning.initial_prompt.messages]]
role = "system"
pattern = "You are an expert banking assistant that classifies customer queries into banking intents. Given a customer message, respond with exactly one intent label from the provided list using the `banking_classify` tool."
order = 0

[[prompt_learning.initial_prompt.messages]]
role = "user"
pattern = "Customer Query: {query}\\n\\nAvailable Intents:\\n{available_intents}\\n\\nClassify this query into one of the above banking intents using the tool call."
order = 1

[prompt_learning.initial_prompt.wildcards]
query = "REQUIRED"
available_intents = "REQUIRED"

[prompt_learning.policy]
inference_mode = "synth_hosted"
provider = "openai"
model = "gpt-4.1-mini"
temperature = 0.0
local_policy = "keyword"
"""


def gepa_toml(*, budget: int, rng_seed: int) -> str:
    return f"""\
[prompt_learning]
algorithm = "gepa"
task_app_url = "http://127.0.0.1:8102"
task_app_id = "banking"
results_folder = "results"

{PROMPT}
[prompt_learning.gepa]
env_name = "banking"
rng_seed = {rng_seed}

[prompt_learning.gepa.rollout]
budget = {budget}
max_concurrent = 8
minibatch_size = 8

[prompt_learning.gepa.evaluation]
train_seeds = {list(range(16))}
val_seeds = {list(range(80, 96))}
test_pool = {list(range(16))}
validation_top_k = 2
"""


MIPRO_TOML = f"""\
[prompt_learning]
algorithm = "mipro"
task_app_url = "http://127.0.0.1:8102"
task_app_id = "banking"
results_folder = "results"

{PROMPT}
[prompt_learning.mipro]
env_name = "banking"
num_iterations = 2
num_evaluations_per_iteration = 3
batch_size = 8
bootstrap_train_seeds = {list(range(32))}
online_pool = {list(range(80, 96))}
test_pool = {list(range(16))}
max_instructions = 3
max_demo_sets = 3
full_eval_every_k = 3
"""


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
    prepared = pipeline.prepare(path, overrides=overrides, target=target, sources=sources)
    assert prepared.ok and prepared.plan is not None, prepared.error
    return await pipeline.submit(prepared.plan, target, runs.api_key, registry=runs.registry(), poll_interval=0.5)


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
        "gepa_a": await _submit(runs, target, "gepa_a", gepa_toml(budget=200, rng_seed=0)),
        "gepa_b": await _submit(runs, target, "gepa_b", gepa_toml(budget=150, rng_seed=1)),
        "mipro": await _submit(runs, target, "mipro", MIPRO_TOML),
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
