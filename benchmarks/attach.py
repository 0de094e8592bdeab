"""``synth-nb attach`` on a finished job with a long history: wall and CPU seconds of the real CLI.

A finished RL job with N events and N/2 metric points is written straight into the local backend's SQLite
database (as ``benchmarks/history.py`` does), the backend serves it from a process of its own, and
``python -m synth_nb attach JOB_ID`` runs in a child process with its output to a file: by default (a note
of how many events came earlier and the newest lines) and with ``--all-events`` (every line).

Anchor: 1M events, 44.5 s (23.4 s CPU) when attach printed every line. Goals: <= 15 s by default, <= 8 s with
``--all-events`` (every line), at load <= 2.

With ``--before PATH`` (another checkout, e.g. ``../main``) the command of that tree's ``synth_nb`` runs too,
interleaved against the same backend, and the two ``--all-events`` outputs are compared (clock stamps and the
port aside): the figures of both and whether the output is the same are printed.

Run: ``python benchmarks/attach.py [--events 1000000] [--repeats 1] [--before ../main]``
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _local_jobs import start_backend_process, stop_backend_process  # noqa: E402
from fanout import process_cpu_seconds  # noqa: E402
from history import API_KEY, JOB_ID, fill_backend  # noqa: E402

ANCHOR_SECONDS, ANCHOR_CPU = 44.5, 23.4
GOAL_SECONDS = {"default": 15.0, "all-events": 8.0}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def attach_once(url: str, backend_pid: int, folder: Path, flags: list[str], tree: Path | None = None,
                keep: Path | None = None) -> tuple[float, float, int, float]:
    """One ``synth-nb attach`` run: (wall seconds, CPU seconds, lines printed, backend CPU seconds); ``tree``: the
    checkout whose ``synth_nb`` runs (None: this one); ``keep``: where its output is copied."""
    out_path = folder / "attach.out"
    env = {**os.environ, "SYNTH_API_KEY": API_KEY}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    backend, cpu, started = process_cpu_seconds(backend_pid), children_cpu(), time.perf_counter()
    with out_path.open("w") as out:
        subprocess.run([sys.executable, "-m", "synth_nb", "attach", JOB_ID, "--backend", url, "--flow", "rl", *flags],
                       stdout=out, env=env, cwd=folder, check=True)
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu
    with out_path.open("rb") as printed:
        lines = sum(1 for _ in printed)
    if keep is not None:
        keep.write_bytes(_STAMPS.sub(b"", out_path.read_bytes()).replace(url.encode(), b"URL"))
    return wall, cpu, lines, process_cpu_seconds(backend_pid) - backend


#: a printed line's clock stamp (the one part of two runs' output that differs)
_STAMPS = re.compile(rb"^\[\d\d:\d\d:\d\d\] ", re.MULTILINE)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=1, help="runs of each mode (interleaved; medians printed)")
    parser.add_argument("--modes", nargs="+", choices=("default", "all-events"), default=["default", "all-events"],
                        help="what to run (a tree without --all-events: default only, which prints every line)")
    parser.add_argument("--before", type=Path, default=None,
                        help="another checkout whose synth_nb runs too, interleaved (its output is compared)")
    args = parser.parse_args()
    trees: dict[str, Path | None] = {"": None} | ({" (before)": args.before.resolve()} if args.before else {})
    with tempfile.TemporaryDirectory(prefix="synth-nb-attach-") as name:
        folder = Path(name)
        fill_backend(folder / "backend", args.events, args.events // 2)
        proc, url = start_backend_process(folder / "backend", API_KEY)
        try:
            runs: dict[tuple[str, str], list[tuple[float, float, int, float]]] = {
                (mode, label): [] for mode in args.modes for label in trees}
            for _ in range(args.repeats):
                for mode, label in runs:
                    keep = folder / f"{mode}{label}.out" if mode == "all-events" else None
                    runs[mode, label].append(attach_once(url, proc.pid, folder, [] if mode == "default" else
                                                         ["--all-events"], trees[label], keep))
            outputs = [(folder / f"all-events{label}.out").read_bytes() for label in trees
                       if (folder / f"all-events{label}.out").exists()]
        finally:
            stop_backend_process(proc)
    for (mode, label), results in runs.items():
        wall = statistics.median(r[0] for r in results)
        cpu = statistics.median(r[1] for r in results)
        backend = statistics.median(r[3] for r in results)
        print(f"synth-nb attach{label}, {args.events:,} events, {'--all-events' if mode == 'all-events' else mode}: "
              f"{wall:.1f} s wall, {cpu:.1f} s CPU (backend {backend:.1f} s), "
              f"{results[0][2]:,} lines printed (anchor {ANCHOR_SECONDS} s, {ANCHOR_CPU} s CPU; "
              f"goal <= {GOAL_SECONDS[mode]:g} s; load {os.getloadavg()[0]:.1f})", flush=True)
    if len(outputs) == 2:
        print(f"--all-events output the same as before (clock stamps aside): {'yes' if outputs[0] == outputs[1] else 'NO'}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
