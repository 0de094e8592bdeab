"""Rollout throughput of local GEPA: over the real HTTP path against the same search in-process.

Both runs use the bundled config (example_notebooks/configs/banking_gepa.toml, 1,000-rollout budget,
held-out scoring included), the offline embedding policy and the offline proposer:
1. over HTTP: a job on the local backend drives the banking task app (its own server), which calls the
   job's policy route on the backend, exactly as a hosted optimiser would;
2. in-process: the same executor and ``gepa`` search with the task app's rollout code and the policy
   called directly (no HTTP, no storage), which is the floor the transport is measured against.

Prints rollouts/s of each (median of ``--repeats`` interleaved runs) and their ratio, the overhead of
the HTTP path (goal: >= 450 rollouts/s over HTTP, overhead <= 9x), and per HTTP run the CPU this process
(backend, and the task app unless it has a process of its own) spent per rollout, which load from other
work on the machine disturbs less than wall time.

The task app runs mounted in the backend (as the notebooks use it), as its own server in a thread beside
the backend (as ``start_task_app`` runs it) and as its own server in a process of its own.

Run: ``python benchmarks/rollouts.py [--repeats 3] [--budget 1000] [--layout mounted|thread|process|all]``
(needs the offline-policy extra).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from prompt_learning import gepa_body, run_job

from synth_nb.local.examples import start_task_app, task_app_path
from synth_nb.local.examples.banking.app import BankingTaskApp
from synth_nb.local.examples.banking.dataset import load_dataset
from synth_nb.local.executors.prompt_learning import runtime
from synth_nb.local.executors.prompt_learning.gepa import GepaExecutor
from synth_nb.local.executors.prompt_learning.rollouts import Rollout, TaskAppRunner, parse_rollout
from synth_nb.local.serve import start_backend

TASK_APP_KEY = "sk_env_bench_rollouts_0123456789"


class MemoryContext:
    """A ``JobContext`` that keeps events in a list and serves policies from a dict (no server)."""

    def __init__(self, body: dict[str, Any], work_dir: Path) -> None:
        self.job_id = "pl_inprocess"
        self.kind = "prompt_learning"
        self.body = body
        self.work_dir = work_dir
        self.cancelled = threading.Event()
        self.backend_url = "http://in-process"
        self.environment_api_key = None
        self.options: dict[str, Any] = {}
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.policies: dict[str, Any] = {}
        self.result: dict[str, Any] = {}

    def emit(self, type: str, message: str = "", data: dict[str, Any] | None = None, level: str = "info") -> None:
        self.events.append((type, data or {}))

    def metric(self, name: str, step: int, value: float, data: dict[str, Any] | None = None) -> None:
        pass

    def update_result(self, **fields: Any) -> None:
        self.result.update(fields)

    def file_path(self, file_id: str) -> Path:
        raise KeyError(file_id)

    def serve_policy(self, handler: Any) -> str:
        path = f"/v1/policies/{len(self.policies)}"
        self.policies[path] = handler
        return self.backend_url + path


class DirectPolicy:
    """The task app's policy client, calling the job's handler in this thread."""

    def __init__(self, handlers: dict[str, Any]) -> None:
        self.handlers = handlers

    async def complete(self, inference_url: str, request: dict[str, Any]) -> dict[str, Any]:
        path = urlsplit(inference_url).path
        result: dict[str, Any] = self.handlers[path](request)
        return result


class InProcessRunner(TaskAppRunner):
    """``TaskAppRunner`` with the banking app's rollout called directly instead of over HTTP."""

    handlers: dict[str, Any] = {}

    def __init__(self, url: str, api_key: str | None, **options: Any) -> None:
        super().__init__(url, api_key, **options)
        self.app = BankingTaskApp(load_dataset())
        self.policy = DirectPolicy(self.handlers)

    def check(self) -> dict[str, Any]:
        return self.app.describe()

    async def post_rollout(self, request: dict[str, Any], seed: int, split: str) -> Rollout:
        return parse_rollout(await self.app.rollout(request, self.policy), seed, split)


def run_in_process(task_app: Any, budget: int) -> dict[str, Any]:
    body = gepa_body(task_app, seed=0, budget=budget)
    with tempfile.TemporaryDirectory() as folder:
        ctx = MemoryContext(body, Path(folder))
        InProcessRunner.handlers = ctx.policies
        original, runtime.TaskAppRunner = runtime.TaskAppRunner, InProcessRunner  # type: ignore[misc]
        try:
            GepaExecutor().run(ctx)  # type: ignore[arg-type]
        finally:
            runtime.TaskAppRunner = original  # type: ignore[misc]
    return next(data for kind, data in ctx.events if kind == "prompt.learning.completed")


def _rate(done: dict[str, Any]) -> float:
    return float((done["rollouts_completed"] + done["heldout_rollouts"]) / done["elapsed_seconds"])


class TaskAppAt:
    """Where a benchmark job finds the task app: its URL and key."""

    def __init__(self, url: str, api_key: str) -> None:
        self.url, self.api_key = url, api_key


@contextlib.contextmanager
def task_app_for(layout: str, backend: Any) -> Iterator[TaskAppAt]:
    """The banking task app mounted in the backend, in a thread beside it, or in a process of its own."""
    if layout == "mounted":
        yield TaskAppAt(backend.url + task_app_path("banking"), TASK_APP_KEY)
    elif layout == "thread":
        with start_task_app("banking") as app:
            yield TaskAppAt(app.url, app.api_key)
    else:
        code = ("import sys\nfrom synth_nb.local.examples import start_task_app\n"
                "app = start_task_app('banking')\nprint(app.url, app.api_key, flush=True)\nsys.stdin.read()\n")
        proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True)
        assert proc.stdout is not None
        try:
            url, key = proc.stdout.readline().split()
            yield TaskAppAt(url, key)
        finally:
            proc.communicate("")


def measure(layout: str, budget: int, repeats: int) -> tuple[float, float]:
    """Median rollouts/s over HTTP and in-process, interleaved, after a full warm-up run of each."""
    http_rates, local_rates = [], []
    with start_backend(task_app_key=TASK_APP_KEY) as backend, task_app_for(layout, backend) as task_app, \
            httpx.Client(base_url=backend.api_url, headers={"Authorization": f"Bearer {backend.api_key}"},
                         timeout=120) as client:
        run_job(client, gepa_body(task_app, seed=0, budget=budget))  # loads the policy, fills its cache
        run_in_process(task_app, budget)
        for repeat in range(repeats):
            cpu = time.process_time()
            http = run_job(client, gepa_body(task_app, seed=0, budget=budget))["done"]
            cpu_ms = 1000 * (time.process_time() - cpu) / (http["rollouts_completed"] + http["heldout_rollouts"])
            local = run_in_process(task_app, budget)
            http_rates.append(_rate(http))
            local_rates.append(_rate(local))
            print(f"  {layout} run {repeat + 1}: HTTP {http['rollouts_completed']}+{http['heldout_rollouts']} "
                  f"rollouts in {http['elapsed_seconds']:.2f} s = {http_rates[-1]:.0f}/s ({cpu_ms:.2f} ms of this "
                  f"process's CPU each); in-process "
                  f"{local['elapsed_seconds']:.2f} s = {local_rates[-1]:.0f}/s; best score {http['best_score']} "
                  f"vs {local['best_score']}", flush=True)
    return statistics.median(http_rates), statistics.median(local_rates)


LAYOUTS = {"mounted": "mounted in the backend (how the notebooks run it)",
           "thread": "own server, thread beside the backend", "process": "own server, own process"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--layout", choices=[*LAYOUTS, "all"], default="all")
    args = parser.parse_args()
    layouts = list(LAYOUTS) if args.layout == "all" else [args.layout]
    figures = {layout: measure(layout, args.budget, args.repeats) for layout in layouts}
    print(f"\nGEPA bundled config, budget {args.budget} (+ held-out), median of {args.repeats} interleaved runs")
    print(f"{'task app':52} {'HTTP/s':>8} {'in-process/s':>13} {'overhead':>9}")
    for layout, (http_rate, local_rate) in figures.items():
        print(f"{LAYOUTS[layout]:52} {http_rate:8.0f} {local_rate:13.0f} {local_rate / http_rate:8.1f}x")
    print("goal: >= 450 rollouts/s over HTTP, overhead <= 9x (before: 145/s, 25x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
