"""Median cold-import time of ``synth_nb`` (goal: < 150 ms and >= 8x faster than synth-ai 0.2.24).

Each run is a fresh interpreter (``python -X importtime`` is not used: the figure includes interpreter
start-up, exactly what a user waits for). The start-up of a bare interpreter is measured too and reported
separately. Set ``SYNTH_AI_VENV`` to a virtualenv with synth-ai 0.2.24 to also time
``import synth_ai.api.train.cli`` and print the ratio.

    python benchmarks/import_time.py [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _median_seconds(python: str, code: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([python, "-c", code], check=True, stdout=subprocess.DEVNULL)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    bare = _median_seconds(sys.executable, "pass", args.runs)
    ours = _median_seconds(sys.executable, "import synth_nb", args.runs)
    print(f"python start-up:           {bare * 1000:7.1f} ms (median of {args.runs})")
    print(f"import synth_nb:           {ours * 1000:7.1f} ms total, {(ours - bare) * 1000:6.1f} ms for the import")
    venv = os.environ.get("SYNTH_AI_VENV")
    if venv:
        python = str(Path(venv) / "bin" / "python")
        theirs_bare = _median_seconds(python, "pass", args.runs)
        theirs = _median_seconds(python, "import synth_ai.api.train.cli", max(3, args.runs // 3))
        print(f"import synth_ai.api.train.cli (0.2.24): {theirs * 1000:7.1f} ms total, "
              f"{(theirs - theirs_bare) * 1000:6.1f} ms for the import")
        print(f"ratio (total):  {theirs / ours:5.1f}x")
        print(f"ratio (import): {(theirs - theirs_bare) / max(ours - bare, 1e-6):5.1f}x")
    else:
        print("(set SYNTH_AI_VENV=/path/to/venv-with-synth-ai-0.2.24 to compare)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
