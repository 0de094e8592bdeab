"""CPU and wall time of short ``synth-nb`` commands, each run as a process the way a user runs it.

Goal: ≤ 0.10 s of CPU (user + sys of the process, ``getrusage(RUSAGE_CHILDREN)``) for ``--help``, ``jobs``,
``backend --status`` and ``cancel``. Each command runs ``--runs`` times in a scratch folder; min and median
are printed, with the ratio of the median to the goal (≤ 1.0 meets it) and the machine's load. What runs:

* ``--help``: the top-level help (every command listed);
* ``jobs``: a folder whose registry holds 20 ended jobs (nothing to ask a backend), and one with none;
* ``backend --status``: a data folder where no backend runs (exit 1), and one where it runs (exit 0);
* ``cancel``: ``cancel JOB_ID --backend URL`` against a real embedded backend started for the benchmark, of a
  job it does not know (the same imports as a real cancel, and a status read under every flow's paths; exit 1),
  and ``cancel --help``;
* ``train --help`` and ``attach --help``, for scale (not in the goal);
* ``cancel`` of a running job with a long history (a replayed recording of ``LONG_EVENTS`` events, then an end
  an hour later; a new job per run): CPU and wall of the command, and the seconds from its start until the
  job ended on the backend (its ``finished_at``: a replay stops as the cancel arrives), which reading the
  history first delays.

Set ``SYNTH_AI_VENV`` to a virtualenv with synth-ai 0.2.24 to time ``synth-ai --help`` as the anchor. The
figures are those of an install with its bytecode compiled (``make bench`` compiles synth_nb's own first); the
first line printed says whether it is (under ``PYTHONDONTWRITEBYTECODE=1`` an uncompiled module is compiled by
every process that imports it, which costs ``cancel`` about a third more CPU).

    python benchmarks/cli_start.py [--runs 7]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

GOAL_CPU = 0.10
#: events of the long job ``cancel`` is timed on (stored by the backend before each run)
LONG_EVENTS = 100_000
HERE = Path(__file__).resolve().parents[1]


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SYNTH_BACKEND_OVERRIDE", "SYNTH_API_KEY", "PYTHONPATH")}
    return env | {"SYNTH_NB_BACKEND_DIR": str(data_dir), "PYTHONPATH": str(HERE)}


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """(CPU s, wall s, exit code) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          timeout=120, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, proc.returncode


def _ended_jobs(folder: Path, count: int) -> None:
    """A registry of ``count`` jobs recorded as ended, with their last event and stop reason."""
    records = [{"job_id": f"pl_{i:032x}", "flow": "prompt_learning", "backend_url": "http://127.0.0.1:9",
                "submitted_at": "2026-01-01T00:00:00Z", "config_path": "banking_gepa.toml", "status": "succeeded",
                "last_seq": 120, "stop_reason": "finished: 4 generations", "algorithm": "gepa"} for i in range(count)]
    (folder / ".synth_nb").mkdir(parents=True)
    (folder / ".synth_nb" / "jobs.json").write_text(json.dumps({"jobs": records}))


def _long_recording(data_dir: Path) -> None:
    """A recording the replay executor stores at once (``LONG_EVENTS`` events) and ends only an hour later."""
    lines = [{"t": 0.0, "kind": "status", "payload": {"status": "running"}}]
    lines += [{"t": 0.0, "kind": "event", "payload": {"type": "sft.progress", "level": "info",
                                                     "message": f"step {i}", "data": {"step": i}}}
              for i in range(LONG_EVENTS)]
    lines.append({"t": 3600.0, "kind": "status", "payload": {"status": "succeeded"}})
    (data_dir / "recordings").mkdir(parents=True, exist_ok=True)
    (data_dir / "recordings" / "long.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def _long_job(http: httpx.Client) -> str:
    """A running job whose ``LONG_EVENTS`` events are all stored."""
    job = http.post("/learning/jobs", json={"metadata": {"local_executor": "replay", "recording": "long.jsonl"}}).json()
    http.post(f"/learning/jobs/{job['id']}/start")
    deadline = time.monotonic() + 600
    while (http.get(f"/learning/jobs/{job['id']}").json().get("last_seq") or 0) < LONG_EVENTS:
        if time.monotonic() > deadline:
            raise RuntimeError("the backend did not store the long job's events in 10 minutes")
        time.sleep(0.2)
    return str(job["id"])


def _cancel_long_jobs(cli: list[str], url: str, data_dir: Path, cwd: Path, env: dict[str, str], runs: int) -> None:
    """``cancel`` of a running job with ``LONG_EVENTS`` events: CPU, wall, and how long until the job ended."""
    key = (data_dir / "api_key").read_text().strip()
    cpu, wall, arrived, code = [], [], [], None
    with httpx.Client(base_url=url + "/api", headers={"Authorization": f"Bearer {key}"}, timeout=60,
                      trust_env=False) as http:
        for _ in range(runs):
            job_id = _long_job(http)
            started = datetime.now(UTC)
            one_cpu, one_wall, code = _timed([*cli, "cancel", job_id, "--backend", url], cwd, env)
            doc = http.get(f"/learning/jobs/{job_id}").json()
            requested = doc.get("finished_at")
            cpu.append(one_cpu)
            wall.append(one_wall)
            if isinstance(requested, str):
                arrived.append((datetime.fromisoformat(requested.replace("Z", "+00:00")) - started).total_seconds())
    label = f"cancel JOB_ID (running, {LONG_EVENTS:,} events)"
    print(f"{label:44} {min(cpu):8.3f} {statistics.median(cpu):8.3f} {min(wall):9.3f} {statistics.median(wall):9.3f} "
          f"{statistics.median(cpu) / GOAL_CPU:8.2f}x  {os.getloadavg()[0]:.1f} (exit {code})")
    if arrived:
        print(f"{'':44} the job ended on the backend {statistics.median(arrived):.3f} s (median) after the "
              f"command started ({len(arrived)} runs)")


def _start_backend(python: str, data_dir: Path, env: dict[str, str]) -> str:
    out = subprocess.run([python, "-m", "synth_nb", "backend", "--start", "--port", "0", "--data-dir", str(data_dir)],
                         env=env, capture_output=True, text=True, timeout=300, check=True).stdout
    return next(word for word in out.split() if word.startswith("http://127.0.0.1:")).rstrip(".,")


def _bytecode_state() -> str:
    """Whether synth_nb's own modules have their bytecode compiled (as a pip install, or ``make bench``, leaves them)."""
    sources = sorted((HERE / "synth_nb").rglob("*.py"))
    compiled = sum(Path(importlib.util.cache_from_source(str(path))).is_file() for path in sources)
    state = "compiled" if compiled == len(sources) else f"NOT compiled for {len(sources) - compiled} of"
    return f"synth_nb's bytecode: {state} {len(sources)} modules (python -m compileall -q synth_nb compiles it)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-backend", action="store_true", help="Skip the cancel against a real backend.")
    parser.add_argument("--long-runs", type=int, default=3, help="Runs of the long job's cancel (0: skip it).")
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="synth-nb-cli-start-") as scratch:
        root = Path(scratch)
        empty, listed, data_dir = root / "empty", root / "listed", root / "backend"
        empty.mkdir()
        _ended_jobs(listed, 20)
        env = _env(data_dir)
        cli = [python, "-m", "synth_nb"]
        cases: list[tuple[str, list[str], Path, bool]] = [  # (label, argv, cwd, in the goal)
            ("--help", [*cli, "--help"], empty, True),
            ("jobs (20 ended jobs)", [*cli, "jobs"], listed, True),
            ("jobs (none recorded)", [*cli, "jobs"], empty, True),
            ("backend --status (not running)", [*cli, "backend", "--status", "--data-dir", str(root / "none")], empty,
             True),
            ("cancel --help", [*cli, "cancel", "--help"], empty, True),
            ("train --help", [*cli, "train", "--help"], empty, False),
            ("attach --help", [*cli, "attach", "--help"], empty, False),
        ]
        url = None
        if not args.no_backend:
            _long_recording(data_dir)
            url = _start_backend(python, data_dir, env)
            cases.insert(4, ("backend --status (running)", [*cli, "backend", "--status"], empty, True))
            cases.insert(6, ("cancel JOB_ID (real backend, unknown job)",
                             [*cli, "cancel", "pl_0123456789abcdef", "--backend", url], empty, True))
        venv = os.environ.get("SYNTH_AI_VENV")
        if venv:
            cases.append(("synth-ai --help (0.2.24, anchor)", [str(Path(venv) / "bin" / "synth-ai"), "--help"],
                          empty, False))
        try:
            print(_bytecode_state())
            print(f"{'command':44} {'CPU min':>8} {'CPU med':>8} {'wall min':>9} {'wall med':>9} {'CPU/goal':>9}  load")
            for label, argv, cwd, in_goal in cases:
                load = os.getloadavg()[0]
                samples = [_timed(argv, cwd, env) for _ in range(args.runs)]
                cpu = [s[0] for s in samples]
                wall = [s[1] for s in samples]
                ratio = f"{statistics.median(cpu) / GOAL_CPU:8.2f}x" if in_goal else f"{'-':>9}"
                print(f"{label:44} {min(cpu):8.3f} {statistics.median(cpu):8.3f} {min(wall):9.3f} "
                      f"{statistics.median(wall):9.3f} {ratio}  {load:.1f}→{os.getloadavg()[0]:.1f} "
                      f"(exit {samples[-1][2]})", flush=True)
            if url and args.long_runs:
                _cancel_long_jobs(cli, url, data_dir, empty, env, args.long_runs)
        finally:
            if url:
                subprocess.run([*cli, "backend", "--stop", "--data-dir", str(data_dir)], env=env,
                               capture_output=True, timeout=120, check=False)
    print(f"\nseconds, {args.runs} runs each; goal ≤ {GOAL_CPU:.2f} s CPU per command (CPU/goal ≤ 1.00 meets it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
