"""Rollout throughput of local GEPA: over the real HTTP path against the same search in-process.

Both runs use the bundled config (example_notebooks/configs/banking_gepa.toml, 1,000-rollout budget,
held-out scoring included), the offline embedding policy and the offline proposer:
1. over HTTP: a job on the local backend drives the banking task app (its own server), which calls the
   job's policy route on the backend, exactly as a hosted optimiser would;
2. in-process: the same executor and ``gepa`` search with the task app's rollout code and the policy
   called directly (no HTTP, no storage), which is the floor the transport is measured against.

Prints rollouts/s of each (median of ``--repeats`` interleaved runs) and their ratio, the overhead of
the HTTP path (goal: >= 450 rollouts/s over HTTP, overhead <= 9x).

Run: ``python benchmarks/rollouts.py [--repeats 3] [--budget 1000] [--task-app-process]``
(needs the offline-policy extra).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from prompt_learning import gepa_body, run_job  # noqa: E402

from synth_nb.local.examples import start_task_app  # noqa: E402
from synth_nb.local.examples.banking.app import BankingTaskApp  # noqa: E402
from synth_nb.local.examples.banking.dataset import load_dataset  # noqa: E402
from synth_nb.local.executors.prompt_learning import runtime  # noqa: E402
from synth_nb.local.executors.prompt_learning.gepa import GepaExecutor  # noqa: E402
from synth_nb.local.executors.prompt_learning.rollouts import Rollout, TaskAppRunner, parse_rollout  # noqa: E402
from synth_nb.local.serve import start_backend  # noqa: E402


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


def _drive(coroutine: Any) -> Any:
    """The value of a coroutine that never suspends (the task app's rollout over a direct policy)."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("the in-process rollout suspended")


class InProcessRunner(TaskAppRunner):
    """``TaskAppRunner`` with the banking app's rollout called directly instead of over HTTP."""

    handlers: dict[str, Any] = {}

    def __init__(self, url: str, api_key: str | None, **options: Any) -> None:
        super().__init__(url, api_key, **options)
        self.app = BankingTaskApp(load_dataset())
        self.policy = DirectPolicy(self.handlers)

    def check(self) -> dict[str, Any]:
        return self.app.describe()

    def post_rollout(self, request: dict[str, Any], seed: int, split: str) -> Rollout:
        return parse_rollout(_drive(self.app.rollout(request, self.policy)), seed, split)


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


def start_task_app_process() -> tuple[subprocess.Popen[str], Any]:
    """The banking task app in a process of its own (its own interpreter, as a user's would be)."""
    code = ("import sys\nfrom synth_nb.local.examples import start_task_app\n"
            "app = start_task_app('banking')\nprint(app.url, app.api_key, flush=True)\nsys.stdin.read()\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url, key = proc.stdout.readline().split()

    class Remote:
        pass

    remote = Remote()
    remote.url, remote.api_key = url, key  # type: ignore[attr-defined]
    return proc, remote


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--task-app-process", action="store_true",
                        help="run the task app in its own process instead of a thread beside the backend")
    args = parser.parse_args()
    proc = None
    if args.task_app_process:
        proc, task_app = start_task_app_process()
    else:
        task_app = start_task_app("banking")
    try:
        with start_backend() as backend, httpx.Client(
                base_url=backend.api_url, headers={"Authorization": f"Bearer {backend.api_key}"},
                timeout=120) as client:
            run_job(client, gepa_body(task_app, seed=0, budget=48, test_pool=False))  # loads the policy
            run_in_process(task_app, 48)
            http_rates, local_rates = [], []
            for repeat in range(args.repeats):
                http = run_job(client, gepa_body(task_app, seed=0, budget=args.budget))["done"]
                local = run_in_process(task_app, args.budget)
                http_rates.append(_rate(http))
                local_rates.append(_rate(local))
                print(f"run {repeat + 1}: HTTP {http['rollouts_completed']}+{http['heldout_rollouts']} rollouts "
                      f"in {http['elapsed_seconds']:.2f} s = {http_rates[-1]:.0f}/s; in-process "
                      f"{local['rollouts_completed']}+{local['heldout_rollouts']} in {local['elapsed_seconds']:.2f} s"
                      f" = {local_rates[-1]:.0f}/s; best {http['best_score']} vs {local['best_score']}", flush=True)
    finally:
        if proc is not None:
            proc.communicate("")
        else:
            task_app.stop()
    http_rate, local_rate = statistics.median(http_rates), statistics.median(local_rates)
    where = "own process" if args.task_app_process else "thread beside the backend"
    print(f"\nGEPA bundled config, budget {args.budget}, task app in a {where}, median of {args.repeats}:")
    print(f"  over HTTP   {http_rate:7.0f} rollouts/s   (goal >= 450; 145 before this work)")
    print(f"  in-process  {local_rate:7.0f} rollouts/s")
    print(f"  overhead    {local_rate / http_rate:7.1f}x       (goal <= 9x; 25x before this work)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
