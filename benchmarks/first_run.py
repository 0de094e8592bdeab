"""First-run times a user waits for, measured with what they run: the synth-nb CLI and ``make demo``.

1. cold first GEPA: ``synth-nb train configs/banking_gepa.toml --backend local`` in a fresh copy of
   example_notebooks/ with a new backend data folder (so the background backend starts, loads the policy
   and runs the job): wall time of the command, with the phases read from the job's events;
2. warm second job: the same command again on the same background backend: seconds from the job's
   creation to its first rollout (``prompt.learning.rollouts.start``), and from the command's launch;
3. ``make demo``: ``example_notebooks/run_demo.py`` (what the target runs) in a temporary folder.

CPU seconds are printed beside wall times (the CLI, plus the backend process, read before it is stopped):
other work on the machine inflates wall time far more than CPU. ``--before PATH`` measures another
checkout (e.g. the main branch) too, each repeat interleaved with this one, for before/after pairs.

Run: ``python benchmarks/first_run.py [--repeats 1] [--before ../main] [--skip-demo]``
(needs the local and offline-policy extras).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psutil

HERE = Path(__file__).resolve().parents[1]
# (synth-ai 0.2.24's figure or None, goal) in seconds
ANCHORS = {"cold": (43.7, 2.5), "cold_cpu": (None, 3.0), "warm": (None, 3.0), "demo": (59.0, 6.0)}


@dataclass(frozen=True)
class Setup:
    """What runs: ``python`` with synth_nb from ``tree`` (on PYTHONPATH), or its own installed copy when
    ``tree`` is None; ``env`` is added to the environment (e.g. PYTHONDONTWRITEBYTECODE=1)."""

    tree: Path | None = HERE
    python: str = sys.executable
    env: dict[str, str] = field(default_factory=dict)

    @property
    def files(self) -> Path:
        return self.tree or HERE


def _env(setup: Setup, backend_dir: Path | None = None) -> dict[str, str]:
    withheld = ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_API_KEY", "ENVIRONMENT_API_KEY", "MPLBACKEND",
                "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k not in withheld} | setup.env
    if setup.tree is not None:
        env["PYTHONPATH"] = str(setup.tree)
    if backend_dir is not None:
        env["SYNTH_NB_BACKEND_DIR"] = str(backend_dir)
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _train(setup: Setup, work: Path, backend_dir: Path) -> dict[str, Any]:
    """One ``synth-nb train`` of the GEPA example; wall and CPU of the command, the job's event times."""
    command = [setup.python, "-m", "synth_nb", "train", "configs/banking_gepa.toml", "--backend", "local"]
    cpu, started = _children_cpu(), time.monotonic()
    launched = time.time()
    done = subprocess.run(command, cwd=work, env=_env(setup, backend_dir), capture_output=True, text=True,
                          timeout=1800)
    wall, cli_cpu = time.monotonic() - started, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"synth-nb train failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    job_id = re.search(r"job:\s+(\S+)", done.stdout)
    assert job_id, done.stdout[-2000:]
    info = json.loads((backend_dir / "backend.json").read_text())
    key = (backend_dir / "api_key").read_text().strip()
    with httpx.Client(base_url=info["url"] + "/api", headers={"Authorization": f"Bearer {key}"}, timeout=60) as c:
        events = c.get(f"/prompt-learning/online/jobs/{job_id.group(1)}/events", params={"limit": 100000}).json()
    at = {}
    for event in events if isinstance(events, list) else events["events"]:
        at.setdefault(event["type"].removeprefix("prompt.learning."), _stamp(event["created_at"]))
    return {"wall": wall, "cli_cpu": cli_cpu, "launched": launched, "at": at, "ended": launched + wall,
            "backend_pid": info["pid"], "backend_started": _stamp(info["started_at"])}


def _backend_cpu(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def first_jobs(setup: Setup) -> dict[str, float]:
    """A cold first job and a warm second one on the same background backend, in a fresh folder."""
    with tempfile.TemporaryDirectory(prefix="synth-nb-first-run-") as folder:
        work, backend_dir = Path(folder) / "examples", Path(folder) / "backend"
        shutil.copytree(setup.files / "example_notebooks", work,
                        ignore=shutil.ignore_patterns(".synth_nb", "results", "__pycache__"))
        try:
            cold = _train(setup, work, backend_dir)
            cold_backend_cpu = _backend_cpu(cold["backend_pid"])
            warm = _train(setup, work, backend_dir)
            warm_backend_cpu = _backend_cpu(warm["backend_pid"]) - cold_backend_cpu
        finally:
            subprocess.run([setup.python, "-m", "synth_nb", "backend", "--stop", "--data-dir", str(backend_dir)],
                           env=_env(setup), capture_output=True, timeout=120)
    a = cold["at"]
    return {
        "cold": cold["wall"], "cold_cpu": cold["cli_cpu"] + cold_backend_cpu, "cold_cli_cpu": cold["cli_cpu"],
        "cold_backend_start": a["created"] - cold["launched"],
        "cold_policy": a["policy.ready"] - a["policy.loading"],
        "cold_search": a["completed"] - a["rollouts.start"],
        "cold_after_job": cold["ended"] - a["completed"],
        "warm_to_search": warm["at"]["rollouts.start"] - warm["at"]["created"],
        "warm_launch_to_search": warm["at"]["rollouts.start"] - warm["launched"],
        "warm": warm["wall"], "warm_cpu": warm["cli_cpu"] + warm_backend_cpu,
    }


def demo(setup: Setup) -> dict[str, float]:
    """``make demo``'s command (``run_demo.py``) with its output in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="synth-nb-demo-") as folder:
        cpu, started = _children_cpu(), time.monotonic()
        done = subprocess.run([setup.python, str(setup.files / "example_notebooks" / "run_demo.py"), "--out",
                               str(Path(folder) / "demo-output")], env=_env(setup), capture_output=True, text=True,
                              timeout=1800)
        wall, used = time.monotonic() - started, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"run_demo.py failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return {"demo": wall, "demo_cpu": used}


ROWS = [  # (key, label, anchor key)
    ("cold", "cold first GEPA example, synth-nb train (wall)", "cold"),
    ("cold_cpu", "  CPU s (CLI + backend process)", "cold_cpu"),
    ("cold_cli_cpu", "    of which the CLI process", None),
    ("cold_backend_start", "  launch -> job created (backend start)", None),
    ("cold_policy", "  policy load inside the job", None),
    ("cold_search", "  search (rollouts.start -> completed)", None),
    ("cold_after_job", "  job completed -> command exits (chart, summary)", None),
    ("warm_to_search", "warm second job: created -> first rollout", "warm"),
    ("warm_launch_to_search", "  command launch -> first rollout", None),
    ("warm", "  whole command (wall)", None),
    ("warm_cpu", "  CPU s (CLI + backend process)", None),
    ("demo", "make demo (run_demo.py, wall)", "demo"),
    ("demo_cpu", "  CPU s of its waited processes (+ backend if it starts it)", None),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--before", type=Path, default=None, help="another checkout to measure, interleaved")
    parser.add_argument("--skip-demo", action="store_true")
    args = parser.parse_args()
    trees = {"this": HERE}
    if args.before is not None:
        trees["before"] = args.before.resolve()
    figures: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    for repeat in range(args.repeats):
        for name, tree in trees.items():
            setup = Setup(tree)
            load = os.getloadavg()[0]
            measured = first_jobs(setup) | ({} if args.skip_demo else demo(setup))
            for key, value in measured.items():
                figures[name].setdefault(key, []).append(value)
            print(f"  run {repeat + 1} {name} (load {load:.1f}→{os.getloadavg()[0]:.1f}): "
                  + ", ".join(f"{k}={v:.1f}" for k, v in measured.items()), flush=True)
    names = list(trees)
    print(f"\nmedian of {args.repeats} (seconds){'; before = ' + str(trees['before']) if 'before' in trees else ''}")
    print(f"{'figure':52} {'anchor':>7} " + " ".join(f"{n:>8}" for n in names) + f" {'goal':>6}")
    for key, label, anchor in ROWS:
        if key not in figures["this"]:
            continue
        before, goal = ANCHORS[anchor] if anchor else (None, None)
        cells = " ".join(f"{statistics.median(figures[n][key]):8.1f}" for n in names)
        print(f"{label:52} {before if before is not None else '':>7} {cells} {'≤ ' + str(goal) if goal else '':>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
