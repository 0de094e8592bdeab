"""How long the views of finished jobs take to draw: the explorer of a GEPA job with many candidates, and
``%synth_train --compare`` of 11 runs.

Real GEPA jobs run on an embedded local backend in a process of its own, as a notebook's is (the keyword
policy, so the setup takes seconds; budgets grown until the largest job has ``--candidates`` candidates).
Then, with each job's history rebuilt from the backend over HTTP (``synth_nb.job.attach``, measured apart):

* explorer: ``job.explorer()._repr_mimebundle_()`` (HTML, Markdown and text: what a notebook output holds),
  goal ≤ 1 s wall;
* compare: ``synth_nb.compare`` of 11 runs by id from a folder's registry (what ``%synth_train --compare``
  runs: each run fetched from the backend, then curves, tables and the figure), then its mimebundle, goal
  ≤ 1 s wall.

Wall and CPU seconds of this process (``getrusage``; the backend's CPU is its own), min and median of
``--repeats``, with the machine's load and the ratio to the goal.

    python benchmarks/views.py [--candidates 60] [--runs 11] [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _local_jobs import TERMINAL, stop_backend_process  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "example_notebooks" / "configs" / "banking_gepa.toml"
PATH = "/prompt-learning/online/jobs"
GOAL_SECONDS = 1.0
API_KEY, TASK_APP_KEY = "sk_bench_views_0123456789abcdef", "sk_bench_views_task_app_0123"


class Remote:
    """An embedded backend in a child process (stopped when its stdin closes) and a client of its ``/api``."""

    def __init__(self, data_dir: Path) -> None:
        import httpx

        code = ("import sys\nfrom synth_nb.local import start_backend\n"
                f"b = start_backend(port=0, data_dir={str(data_dir)!r}, api_key={API_KEY!r}, "
                f"task_app_key={TASK_APP_KEY!r})\nprint(b.url, flush=True)\nsys.stdin.read()\nb.stop()\n")
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        self.http = httpx.Client(base_url=self.url + "/api", timeout=120.0,
                                 headers={"Authorization": f"Bearer {API_KEY}"})

    def run(self, body: dict[str, Any]) -> str:
        created = self.http.post(PATH, json=body)
        created.raise_for_status()
        job_id = str(created.json()["job_id"])
        while (doc := self.http.get(f"{PATH}/{job_id}").json()).get("status") not in TERMINAL:
            time.sleep(0.25)
        if doc.get("status") != "succeeded":
            raise SystemExit(f"GEPA job {job_id} ended {doc.get('status')}")
        return job_id

    def close(self) -> None:
        self.http.close()
        stop_backend_process(self.proc)


def gepa_body(backend: Remote, *, budget: int, seed: int) -> dict[str, Any]:
    pl = copy.deepcopy(tomllib.loads(CONFIG.read_text(encoding="utf-8"))["prompt_learning"])
    pl["task_app_url"] = backend.url + "/task-apps/banking"
    pl["task_app_api_key"] = TASK_APP_KEY
    pl["policy"]["local_policy"] = "keyword"
    pl["gepa"]["rng_seed"] = seed
    pl["gepa"]["rollout"]["budget"] = budget
    pl["gepa"]["evaluation"]["test_pool"] = list(range(16))
    return {"algorithm": "gepa", "config_body": {"prompt_learning": pl}, "auto_start": True}


def run_gepa(backend: Remote, budget: int, seed: int) -> str:
    return backend.run(gepa_body(backend, budget=budget, seed=seed))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(action: Callable[[], Any], repeats: int) -> tuple[list[float], list[float], Any]:
    walls, cpus, result = [], [], None
    for _ in range(repeats):
        cpu, started = _cpu(), time.perf_counter()
        result = action()
        walls.append(time.perf_counter() - started)
        cpus.append(_cpu() - cpu)
    return walls, cpus, result


def say(label: str, walls: list[float], cpus: list[float], load: float, goal: float | None) -> None:
    ratio = f"{statistics.median(walls) / goal:6.2f}x of the goal" if goal else ""
    print(f"{label:58} wall min {min(walls):6.3f} med {statistics.median(walls):6.3f} s, CPU med "
          f"{statistics.median(cpus):6.3f} s  (load {load:.1f}) {ratio}", flush=True)


def attach_job(backend: Remote, job_id: str) -> Any:
    from synth_nb.client import AsyncSynthClient
    from synth_nb.flows import get_flow
    from synth_nb.job import attach

    async def rebuilt() -> Any:
        async with AsyncSynthClient(backend.url + "/api", API_KEY) as client:
            return await attach(job_id, client, {"prompt_learning": get_flow("prompt_learning").endpoints})

    return asyncio.run(rebuilt())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=60)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="synth-nb-views-") as name:
        folder = Path(name)
        backend = Remote(folder / "backend")
        try:
            budget, job_id, job = 1500, "", None
            while True:  # the budget that gives a job with at least --candidates candidates
                job_id = run_gepa(backend, budget, seed=0)
                job = attach_job(backend, job_id)
                count = len(job.explorer().candidates)
                print(f"GEPA job with budget {budget}: {count} candidates, {len(job.events):,} events", flush=True)
                if count >= args.candidates or budget >= 20_000:
                    break
                budget = int(budget * max(1.3, args.candidates / max(count, 1)))
            load = os.getloadavg()[0]
            walls, cpus, _ = timed(lambda: attach_job(backend, job_id), args.repeats)
            say("explorer job: history rebuilt over HTTP (not in the goal)", walls, cpus, load, None)
            load = os.getloadavg()[0]
            walls, cpus, bundle = timed(lambda: job.explorer()._repr_mimebundle_(), args.repeats)
            say(f"explorer of {count} candidates: explorer() + mimebundle", walls, cpus, load, GOAL_SECONDS)
            print(f"  ({len(bundle['text/html']):,} characters of HTML)")

            ids = [job_id] + [run_gepa(backend, 300, seed) for seed in range(1, args.runs)]
            project = folder / "project"
            project.mkdir()
            records(project, ids, backend)
            os.environ["SYNTH_API_KEY"] = API_KEY
            from synth_nb import compare

            load = os.getloadavg()[0]
            walls, cpus, _ = timed(lambda: compare(ids, folder=project)._repr_mimebundle_(), args.repeats)
            say(f"compare of {len(ids)} runs by id: fetch + compare() + mimebundle", walls, cpus, load, GOAL_SECONDS)
            load = os.getloadavg()[0]
            walls, cpus, comparison = timed(lambda: compare(ids, folder=project), args.repeats)
            say(f"  of which compare() (the {len(ids)} runs fetched)", walls, cpus, load, None)
            walls, cpus, _ = timed(lambda: replace(comparison, _pngs={}, _rows=None)._repr_mimebundle_(),
                                   args.repeats)
            say("  and its mimebundle (tables, 3 charts)", walls, cpus, load, None)
        finally:
            backend.close()
    return 0


def records(project: Path, ids: list[str], backend: Remote) -> None:
    """The folder's registry: each job recorded as sent to the backend (``--compare`` finds them there)."""
    from synth_nb.job import JobRecord, JobRegistry

    registry = JobRegistry(project)
    for job_id in ids:
        registry.record(JobRecord(job_id=job_id, flow="prompt_learning", backend_url=backend.url,
                                  algorithm="gepa", status="succeeded"))


if __name__ == "__main__":
    sys.exit(main())
