"""Rollout throughput and CPU per rollout of local GEPA: each task-app layout against the same search in-process.

Both runs use the bundled config (example_notebooks/configs/banking_gepa.toml, 1,000-rollout budget,
held-out scoring included), the offline embedding policy and the offline proposer:
1. a job on the local backend, which drives the banking task app, which calls the job's policy route on the
   backend, exactly as a hosted optimiser would. The task app is
   - mounted in the backend (as the notebooks use it): the job calls its ``/rollout`` and it calls the policy
     route in-process, through the same contract code as HTTP (no socket);
   - its own server in a thread beside the backend (``start_task_app``): real HTTP both ways;
   - its own server in a process of its own: real HTTP both ways;
2. in-process search (the anchor): the same executor and ``gepa`` search with the task app's rollout code and
   the policy called directly (no transport, no contract checks, no storage), the floor the layouts are
   measured against.

Prints, per layout, rollouts/s and CPU ms per rollout (median of ``--repeats`` interleaved runs, after a
warm-up run of each): the CPU of this process (backend, plus the task app unless it has a process of its
own), and with the task app's own process added; the same for the in-process search; the ratios to it and
the goals (mounted: <= 0.25 ms, >= 3,000 rollouts/s, <= 3x the in-process search; own process: <= 0.5 ms).
CPU time is what load from other work on the machine disturbs least: the load average is printed beside it.

Run: ``python benchmarks/rollouts.py [--repeats 3] [--budget 1000] [--layout mounted|thread|process|all]``
(needs the offline-policy extra).
"""

from __future__ import annotations

import argparse
import contextlib
import os
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
import psutil
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
    """Where a benchmark job finds the task app: its URL and key, and its process when it has its own."""

    def __init__(self, url: str, api_key: str, pid: int | None = None) -> None:
        self.url, self.api_key, self.pid = url, api_key, pid

    def own_cpu(self) -> float:
        """CPU seconds of the task app's own process so far (0 when it runs in this one)."""
        if self.pid is None:
            return 0.0
        times = psutil.Process(self.pid).cpu_times()
        return float(times.user + times.system)


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
            yield TaskAppAt(url, key, proc.pid)
        finally:
            proc.communicate("")


class Figures:
    """Per-run figures of one layout: rollouts/s and CPU ms per rollout of the job and of the in-process search."""

    def __init__(self) -> None:
        self.rate: list[float] = []
        self.cpu: list[float] = []  # this process
        self.cpu_all: list[float] = []  # with the task app's own process
        self.local_rate: list[float] = []
        self.local_cpu: list[float] = []

    def median(self, name: str) -> float:
        return statistics.median(getattr(self, name))


def _rollouts(done: dict[str, Any]) -> int:
    return int(done["rollouts_completed"] + done["heldout_rollouts"])


def measure(layout: str, budget: int, repeats: int) -> Figures:
    """The job and the in-process search, interleaved, after a full warm-up run of each."""
    figures = Figures()
    with start_backend(task_app_key=TASK_APP_KEY) as backend, task_app_for(layout, backend) as task_app, \
            httpx.Client(base_url=backend.api_url, headers={"Authorization": f"Bearer {backend.api_key}"},
                         timeout=120) as client:
        run_job(client, gepa_body(task_app, seed=0, budget=budget))  # loads the policy, fills its cache
        run_in_process(task_app, budget)
        for repeat in range(repeats):
            cpu, other = time.process_time(), task_app.own_cpu()
            http = run_job(client, gepa_body(task_app, seed=0, budget=budget))["done"]
            spent, other = time.process_time() - cpu, task_app.own_cpu() - other
            figures.cpu.append(1000 * spent / _rollouts(http))
            figures.cpu_all.append(1000 * (spent + other) / _rollouts(http))
            figures.rate.append(_rate(http))
            cpu = time.process_time()
            local = run_in_process(task_app, budget)
            figures.local_cpu.append(1000 * (time.process_time() - cpu) / _rollouts(local))
            figures.local_rate.append(_rate(local))
            print(f"  {layout} run {repeat + 1}: job {http['rollouts_completed']}+{http['heldout_rollouts']} rollouts "
                  f"in {http['elapsed_seconds']:.2f} s = {figures.rate[-1]:.0f}/s, {figures.cpu[-1]:.3f} ms of "
                  f"this process's CPU each ({figures.cpu_all[-1]:.3f} with the task app's process); in-process "
                  f"search {local['elapsed_seconds']:.2f} s = {figures.local_rate[-1]:.0f}/s, "
                  f"{figures.local_cpu[-1]:.3f} ms each; best score {http['best_score']} vs {local['best_score']}",
                  flush=True)
    return figures


LAYOUTS = {"mounted": "mounted in the backend (rollouts in-process)",
           "thread": "own server, thread beside the backend (HTTP)", "process": "own server, own process (HTTP)"}
GOALS = {"mounted": "<= 0.25 ms, >= 3000/s, <= 3x", "thread": "", "process": "<= 0.5 ms"}


def _load() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--layout", choices=[*LAYOUTS, "all"], default="all")
    args = parser.parse_args()
    layouts = list(LAYOUTS) if args.layout == "all" else [args.layout]
    print(f"load average (1, 5, 15 min) before: {_load()}", flush=True)
    figures = {layout: measure(layout, args.budget, args.repeats) for layout in layouts}
    print(f"load average (1, 5, 15 min) after: {_load()}")
    print(f"\nGEPA bundled config, budget {args.budget} (+ held-out), median of {args.repeats} interleaved runs; "
          "CPU ms per rollout of this process / with the task app's own process")
    print(f"{'task app':46} {'rollouts/s':>10} {'CPU ms':>7} {'all ms':>7} {'search/s':>9} {'search ms':>9} "
          f"{'x rate':>7} {'x CPU':>6}  goal")
    for layout, f in figures.items():
        rate, local_rate, cpu_all, local_cpu = (f.median("rate"), f.median("local_rate"), f.median("cpu_all"),
                                                f.median("local_cpu"))
        print(f"{LAYOUTS[layout]:46} {rate:10.0f} {f.median('cpu'):7.3f} {cpu_all:7.3f} {local_rate:9.0f} "
              f"{local_cpu:9.3f} {local_rate / rate:6.1f}x {cpu_all / local_cpu:5.1f}x  {GOALS[layout]}")
    print("x rate: the in-process search's rollouts/s over the layout's; x CPU: the layout's CPU per rollout (all "
          "processes) over the search's. Before this round: mounted over HTTP 0.48-0.54 ms, 1,503-2,039/s (7.3x).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
