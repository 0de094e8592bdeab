"""The pre-flight estimate beside the real run, for every bundled example config, as a user runs them.

For each config of example_notebooks/configs, in a fresh copy of example_notebooks/ with a new backend data
folder (the config's hand-run task-app URL pointed where nothing listens, so the backend's bundled task app
answers, whatever else runs on this machine): ``synth-nb train CONFIG --backend local --check --json`` (the estimate), then ``synth-nb train
CONFIG --backend local`` (the job, on the background backend process the CLI starts), then the job's own
report read from the backend: rollouts, tokens, cost where it reports one, and wall time (its status
document's ``started_at`` to ``finished_at``, the span the final block's ``time`` shows). Prints one row per
figure: estimate, real, ratio (estimate / real), and what the wall-time estimate was made from. The load
average before the check, before the run and after it is printed beside each: wall time moves with it, the
other figures do not. The backend's CPU seconds for the check and for the run (its training workers'
included) are printed too: the load does not change them.

``--before PATH`` runs another checkout (e.g. the main branch) too, each config interleaved with this one.

Run: ``python benchmarks/estimate_vs_real.py [--before ../main] [--configs banking_gepa.toml ...]``
(needs the local, offline-policy and train extras).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parents[1]
CONFIGS = ("banking_gepa.toml", "banking_mipro.toml", "sft_tiny.toml", "rl_tiny.toml")
ROUTES = {"prompt_learning": "prompt-learning/online/jobs", "sft": "learning/jobs", "rl": "rl/jobs"}


def _env(tree: Path, backend_dir: Path) -> dict[str, str]:
    withheld = ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_API_KEY", "ENVIRONMENT_API_KEY", "MPLBACKEND")
    env = {k: v for k, v in os.environ.items() if k not in withheld}
    return {**env, "PYTHONPATH": str(tree), "SYNTH_NB_BACKEND_DIR": str(backend_dir)}


def _cli(tree: Path, folder: Path, backend_dir: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "synth_nb", "train", *args], cwd=folder, capture_output=True,
                          text=True, env=_env(tree, backend_dir), timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"synth-nb train {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def _cpu(pid: int) -> float | None:
    """CPU seconds of process ``pid`` and its waited-for children (the training workers), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _seconds(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def _reported(backend: Any, folder: Path) -> dict[str, Any]:
    """The job's own report: rollouts, tokens, cost (where given) and started-to-finished seconds."""
    from synth_nb.job import JobRegistry

    (record,) = JobRegistry(folder).list()
    route = ROUTES[record.flow]
    with httpx.Client(base_url=f"{backend.url}/api", timeout=60,
                      headers={"Authorization": f"Bearer {backend.api_key}"}) as http:
        status = http.get(f"{route}/{record.job_id}").json()
        events = http.get(f"{route}/{record.job_id}/events", params={"limit": 20000}).json()
    events = events["events"] if isinstance(events, dict) else events
    by: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by.setdefault(event["type"], []).append(event.get("data") or {})
    real: dict[str, Any] = {"wall": _seconds(status["finished_at"]) - _seconds(status["started_at"])}
    if record.flow == "prompt_learning":
        done = by["prompt.learning.completed"][0]
        real.update(rollouts=done["rollouts_completed"] + done["heldout_rollouts"], tokens=done["token_count_total"],
                    cost=done.get("total_usd"))
    elif record.flow == "sft":
        real.update(tokens=by["sft.training.finish"][0]["tokens"])
    else:
        real.update(rollouts=sum(s["rollouts"] for s in by["rl.train.step"])
                    + sum(len(s["seeds"]) for s in by["rl.eval.started"]),
                    tokens=by["rl.train.completed"][0]["tokens"])
    return real


def measure(tree: Path, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(estimate, real) of one bundled config run with the checkout at ``tree``."""
    from synth_nb.local.shared import find_backend, stop_backend

    with tempfile.TemporaryDirectory() as scratch:
        folder, backend_dir = Path(scratch) / "examples", Path(scratch) / "backend"
        shutil.copytree(HERE / "example_notebooks", folder, ignore=shutil.ignore_patterns("*.ipynb", "results"))
        config = f"configs/{name}"
        # the hand-run task-app URL points where nothing listens, so the backend's bundled copy answers
        path = folder / config
        path.write_text(path.read_text(encoding="utf-8").replace(":8102", ":9"), encoding="utf-8")
        try:
            checked_at = os.getloadavg()[0]
            card = json.loads(_cli(tree, folder, backend_dir, config, "--backend", "local", "--check", "--json"))
            load = os.getloadavg()[0]
            checked = find_backend(backend_dir)
            cpu_checked = _cpu(checked.pid) if checked is not None else None
            _cli(tree, folder, backend_dir, config, "--backend", "local")
            backend = find_backend(backend_dir)
            assert backend is not None, "the background backend is gone"
            real = _reported(backend, folder)
            cpu_run = _cpu(backend.pid)
        finally:
            stop_backend(backend_dir)
    estimate = dict(card["estimate"])
    estimate["load"], estimate["checked_at"], real["load_after"] = load, checked_at, os.getloadavg()[0]
    # the backend's CPU seconds (its training workers' included): the check's (with the backend's start) and
    # the run's, which the machine's load does not change as it changes wall time
    estimate["cpu"] = cpu_checked
    rehearsal = (card.get("dry_rollout") or {}).get("proposal") or {}
    estimate["rehearsal_cpu"], estimate["rehearsal_wall"] = (rehearsal.get("rehearsal_cpu_seconds"),
                                                             rehearsal.get("rehearsal_seconds"))
    real["cpu"] = cpu_run - cpu_checked if cpu_run is not None and cpu_checked is not None else None
    return estimate, real


def _ratio(estimate: float | None, real: float | None) -> str:
    return f"{estimate / real:.2f}" if estimate is not None and real else "-"


def report(label: str, name: str, estimate: dict[str, Any], real: dict[str, Any]) -> None:
    floor = "at least " if estimate.get("tokens_floor") else ""
    wall = estimate.get("wall") or (f"{estimate['wall_seconds']:.1f} s" if estimate.get("wall_seconds") else "unknown")
    rows = [("rollouts", f"{estimate['rollouts']:,}" if estimate.get("rollouts") else "-",
             f"{real['rollouts']:,}" if "rollouts" in real else "-", _ratio(estimate.get("rollouts"), real.get("rollouts"))),
            ("tokens", f"{floor}{estimate['tokens']:,}" if estimate.get("tokens") else "unknown", f"{real['tokens']:,}",
             _ratio(estimate.get("tokens"), real["tokens"])),
            ("wall time", wall, f"{real['wall']:.2f} s" if real["wall"] < 10 else f"{real['wall']:.1f} s",
             _ratio(estimate.get("wall_seconds"), real["wall"])),
            ("cost", estimate["cost"].split(" (")[0], "-" if real.get("cost") is None else f"${real['cost']:g}", "")]
    print(f"{label} {name} (1-min load average {estimate['checked_at']:.1f} before the check, "
          f"{estimate['load']:.1f} before the run, {real['load_after']:.1f} after it; 2 cores):")
    for figure, guess, actual, ratio in rows:
        print(f"  {figure:<10} estimate {guess:<34} real {actual:<14} ratio {ratio}")
    cpu = ("backend CPU (its training workers' included): " + ", ".join(
        f"{what} {seconds:.2f} s" for what, seconds in (("check (with its start)", estimate.get("cpu")),
                                                         ("the search rehearsed in it", estimate.get("rehearsal_cpu")),
                                                         ("run", real.get("cpu"))) if seconds is not None))
    if estimate.get("rehearsal_wall") is not None:
        cpu += f" (the rehearsal's wall time {estimate['rehearsal_wall']:.2f} s)"
    print(f"  {cpu}")
    print(f"  wall time from: {estimate.get('wall_how') or '-'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="another checkout to measure too (e.g. ../main)")
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS))
    args = parser.parse_args()
    trees = [("before", args.before.resolve())] if args.before else []
    trees.append(("after" if args.before else "this", HERE))
    for name in args.configs:
        for label, tree in trees:
            report(label, name, *measure(tree, name))


if __name__ == "__main__":
    main()
