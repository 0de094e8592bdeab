"""Prompt-learning figures on the local backend, the bundled banking task app and the offline policy.

Prints (plain text, no assertions):
1. wall time and rollouts/s of the bundled GEPA config (example_notebooks/configs/banking_gepa.toml,
   1,000-rollout budget), through the real HTTP path (backend -> task app -> backend policy route);
2. held-out accuracy, baseline -> best, for GEPA with rng_seed 0, 1, 2 (goal: >= +10 points on average);
3. rollout throughput with max_concurrent = 1 against the config's concurrency.

Run: ``python benchmarks/prompt_learning.py [--seeds 3] [--budget 1000]`` (needs the offline-policy extra).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import httpx

from synth_nb.local.examples import start_task_app
from synth_nb.local.serve import start_backend

CONFIG = Path(__file__).resolve().parents[1] / "example_notebooks" / "configs" / "banking_gepa.toml"


def gepa_body(task_app: Any, *, seed: int, budget: int, concurrent: int | None = None,
              test_pool: bool = True) -> dict[str, Any]:
    pl = copy.deepcopy(tomllib.loads(CONFIG.read_text(encoding="utf-8"))["prompt_learning"])
    pl["task_app_url"], pl["task_app_api_key"] = task_app.url, task_app.api_key
    pl["gepa"]["rng_seed"] = seed
    pl["gepa"]["rollout"]["budget"] = budget
    if concurrent is not None:
        pl["gepa"]["rollout"]["max_concurrent"] = concurrent
    if not test_pool:
        pl["gepa"]["evaluation"]["test_pool"] = []
    return {"algorithm": "gepa", "config_body": {"prompt_learning": pl}, "auto_start": True}


def run_job(client: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    started = time.monotonic()
    created = client.post("/prompt-learning/online/jobs", json=body)
    created.raise_for_status()
    job_id = created.json()["job_id"]
    while True:
        status = client.get(f"/prompt-learning/online/jobs/{job_id}").json()
        if status["status"] in ("succeeded", "failed", "cancelled"):
            break
        time.sleep(0.25)
    wall = time.monotonic() - started
    events = client.get(f"/prompt-learning/online/jobs/{job_id}/events", params={"limit": 10000}).json()
    events = events["events"] if isinstance(events, dict) else events
    if status["status"] != "succeeded":
        errors = [e["message"] for e in events if e.get("level") == "error"]
        raise SystemExit(f"job {job_id} ended {status['status']}: {errors[-1:]}")
    done = next(e["data"] for e in events if e["type"] == "prompt.learning.completed")
    return {"wall": wall, "status": status, "done": done}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--throughput-budget", type=int, default=200)
    args = parser.parse_args()
    with start_task_app("banking") as task_app, start_backend() as backend, httpx.Client(
            base_url=backend.api_url, headers={"Authorization": f"Bearer {backend.api_key}"}, timeout=120) as client:
        t0 = time.monotonic()
        warm = run_job(client, gepa_body(task_app, seed=0, budget=48, test_pool=False))
        print(f"policy warm-up job (model load + 48 rollouts): {time.monotonic() - t0:.1f} s wall", flush=True)
        del warm

        print(f"\n== GEPA, bundled config, budget {args.budget}, rng_seed 0..{args.seeds - 1}")
        gains, rates = [], []
        for seed in range(args.seeds):
            result = run_job(client, gepa_body(task_app, seed=seed, budget=args.budget))
            done, status = result["done"], result["status"]
            rollouts, heldout = done["rollouts_completed"], done["heldout_rollouts"]
            search_s = done["elapsed_seconds"]
            base, best = status["baseline_score"], status["best_score"]
            gains.append(best - base)
            rates.append((rollouts + heldout) / search_s)
            print(f"seed {seed}: {rollouts} search + {heldout} held-out rollouts; job wall {result['wall']:.1f} s "
                  f"(optimisation {search_s:.1f} s, {(rollouts + heldout) / search_s:.1f} rollouts/s); "
                  f"held-out accuracy {base:.3f} -> {best:.3f} ({(best - base) * 100:+.1f} points); "
                  f"validation {status['baseline_train_score']:.3f} -> {status['best_train_score']:.3f}; "
                  f"finish {done['finish_reason']}", flush=True)
        print(f"mean held-out gain {statistics.mean(gains) * 100:+.1f} points "
              f"(min {min(gains) * 100:+.1f}, max {max(gains) * 100:+.1f}); "
              f"mean throughput {statistics.mean(rates):.1f} rollouts/s")

        print(f"\n== Rollout throughput, budget {args.throughput_budget} (+ final re-scoring on the validation seeds)")
        for concurrent in (1, None):
            result = run_job(client, gepa_body(task_app, seed=0, budget=args.throughput_budget, concurrent=concurrent,
                                               test_pool=False))
            done = result["done"]
            label = "sequential (max_concurrent=1)" if concurrent == 1 else "concurrent (config's max_concurrent)"
            total = done["rollouts_completed"] + done["heldout_rollouts"]
            print(f"{label}: {total} rollouts in {done['elapsed_seconds']:.1f} s = "
                  f"{total / done['elapsed_seconds']:.1f} rollouts/s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
