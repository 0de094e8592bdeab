"""How long ``synth-nb train`` takes to end once its embedded backend is killed (``kill -9`` by pid) mid-job.

The backend is started in a data folder of its own, replaying a GEPA recording slowly; ``train --backend local
--yes`` follows the job; once the job is running the backend's pid (from its info file) gets SIGKILL, and the
time until ``train`` exits is printed with its exit code. Before: ``train`` retried until ``--poll-timeout``
(an hour by default).

Run: ``python benchmarks/dead_backend.py [--repeats 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from minimal_configs import MINIMAL_GEPA  # noqa: E402

from synth_nb.local.shared import stop_backend  # noqa: E402

CLI = [sys.executable, "-m", "synth_nb"]


def one_run(folder: Path) -> tuple[float, int]:
    data = folder / "backend-data"
    env = {k: v for k, v in os.environ.items() if k not in ("SYNTH_API_KEY", "SYNTH_BACKEND_OVERRIDE")}
    env.update(SYNTH_NB_BACKEND_DIR=str(data), ENVIRONMENT_API_KEY="sk_env_bench_0123456789abcdef",
               SYNTH_SKIP_TASK_APP_HEALTH_CHECK="1", PYTHONUNBUFFERED="1")
    subprocess.run([*CLI, "backend", "--start", "--port", "0", "--data-dir", str(data), "--default-executor", "replay",
                    "--replay-speed", "0.5"], check=True, capture_output=True, env=env)
    try:
        train = subprocess.Popen([*CLI, "train", "cfg.toml", "--backend", "local", "--yes"], cwd=folder, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert train.stdout is not None
        for line in train.stdout:
            if "prompt.learning.progress" in line:  # the job is running
                break
        pid = json.loads((data / "backend.json").read_text())["pid"]
        os.kill(pid, signal.SIGKILL)
        killed = time.perf_counter()
        train.stdout.read()
        code = train.wait()
        return time.perf_counter() - killed, code
    finally:
        stop_backend(data)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    runs = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="synth-nb-dead-backend-") as name:
            folder = Path(name)
            (folder / "cfg.toml").write_text(MINIMAL_GEPA, encoding="utf-8")
            runs.append(one_run(folder))
    seconds = [s for s, _ in runs]
    print(f"train ends {statistics.median(seconds):.2f} s after the embedded backend is killed "
          f"(median of {args.repeats}; max {max(seconds):.2f} s), exit {sorted({c for _, c in runs})}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
