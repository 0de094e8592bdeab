"""Local RL figures: reward at the start vs the end of GRPO on the bundled character-class task app,
over several seeds, with wall time. Runs a real embedded backend and the task app over HTTP.

    .venv/bin/python benchmarks/rl.py [--seeds 0 1 2] [--steps 60]

The config is example_notebooks/configs/rl_tiny.toml (its [model]/[rollout]/[training]/[evaluation] tables,
sent the way the 0.2.24 CLI sends them).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _local_jobs import Backend  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "example_notebooks" / "configs" / "rl_tiny.toml"
KEY = "sk_env_benchmark_charclass_key"


def _body(task_url: str, steps: int, seed: int) -> dict:
    config = tomllib.loads(CONFIG.read_text())
    config["services"] = {"task_url": task_url}
    config["training"]["iterations_per_epoch"] = steps
    config["training"]["num_epochs"] = 1
    return {"job_type": "rl", "compute": config.get("compute", {}),
            "data": {"endpoint_base_url": task_url, "config": config, "base_model": config["model"]["base"]},
            "tags": {"source": "benchmark"}, "metadata": {"local_training": {"seed": seed}}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=None, help="default: the config's iterations_per_epoch")
    args = parser.parse_args()
    from synth_nb.local.examples.charclass import serve

    steps = args.steps or tomllib.loads(CONFIG.read_text())["training"]["iterations_per_epoch"]
    app, _ = serve(api_key=KEY)
    backend = Backend(environment_api_key=KEY)
    rows = []
    try:
        for seed in args.seeds:
            started = time.perf_counter()
            job = backend.create("/rl/jobs", _body(app.url, steps, seed), start=False)
            doc, worst_health = backend.wait("/rl/jobs", job)
            wall = time.perf_counter() - started
            if doc["status"] != "succeeded":
                print(f"seed {seed}: job ended {doc['status']}: {doc.get('error')}")
                return 1
            rl = doc.get("rl") or {}
            rows.append((seed, rl["reward_start"], rl["reward_end"], rl.get("eval_reward_start"),
                         rl.get("eval_reward_end"), wall, rl.get("seconds"), doc.get("worker_peak_rss_mb"),
                         worst_health))
            print(f"seed {seed}: train reward {rl['reward_start']:.3f} -> {rl['reward_end']:.3f}, eval "
                  f"{rl.get('eval_reward_start')} -> {rl.get('eval_reward_end')}, {steps} steps, wall {wall:.0f} s "
                  f"(training {rl.get('seconds')} s), peak RSS {doc.get('worker_peak_rss_mb')} MB, worst /health "
                  f"{worst_health * 1000:.0f} ms", flush=True)
    finally:
        backend.close()
        app.stop()
    start = statistics.fmean(r[1] for r in rows)
    end = statistics.fmean(r[2] for r in rows)
    eval_start = statistics.fmean(r[3] or 0.0 for r in rows)
    eval_end = statistics.fmean(r[4] or 0.0 for r in rows)
    print(f"\nmean over {len(rows)} seeds: train reward {start:.3f} -> {end:.3f} (x{end / max(start, 1e-9):.1f}), "
          f"eval {eval_start:.3f} -> {eval_end:.3f}; mean wall {statistics.fmean(r[5] for r in rows):.0f} s per job")
    improved = sum(r[2] > r[1] for r in rows)
    print(f"train reward rose in {improved}/{len(rows)} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
