"""Peak memory of ``synth-nb attach`` when a backend answers out of bounds: the client reads at most 64 MiB.

The hostile backend of the test suite (``tests/hostile/hostile_backend.py``: Starlette on uvicorn, 127.0.0.1)
answers a job's status with 200 MiB (streamed, and with its Content-Length declared), a document nested
200,000 levels deep, and, as the baseline, a well-behaved job. ``python -m synth_nb attach`` runs once per
case in a child process; its peak RSS comes from ``wait4``. Before the bounds, the 200 MiB status took
1.4 GiB of client memory (and the nested one ended in ``RecursionError``).

Run: ``python benchmarks/hostile_answers.py [--mib 200]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "hostile"))
from hostile_backend import API_KEY, HostileJob, good_id, good_job, huge_body, nested_body, serve  # noqa: E402


def attach_peak(url: str, job_id: str, folder: Path) -> tuple[float, int, float, str]:
    """One ``synth-nb attach``: (peak RSS in MiB, exit code, wall seconds, its last line of stderr)."""
    env = {**os.environ, "SYNTH_API_KEY": API_KEY}
    env.pop("SYNTH_BACKEND_OVERRIDE", None)
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "synth_nb", "attach", job_id, "--backend", url,
                                 "--flow", "prompt_learning", "--poll-timeout", "120"],
                                cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        last = (err.read().decode(errors="replace").strip().splitlines() or [""])[-1]
    return usage.ru_maxrss / 1024, proc.returncode, time.perf_counter() - started, last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=200, help="size of the oversized status answers")
    args = parser.parse_args()
    cases = {
        "a well-behaved job (baseline)": good_job(),
        f"{args.mib} MiB status, streamed": HostileJob(good_id(), status_body=huge_body(args.mib)),
        f"{args.mib} MiB status, Content-Length declared": HostileJob(good_id(),
                                                                      status_body=huge_body(args.mib, declared=True)),
        "status nested 200,000 levels": HostileJob(good_id(), status_body=nested_body(200_000)),
    }
    with serve() as backend, tempfile.TemporaryDirectory(prefix="synth-nb-hostile-") as name:
        for label, job in cases.items():
            backend.add(job)
            peak, code, wall, last = attach_peak(backend.url, job.id, Path(name))
            print(f"synth-nb attach, {label}: peak RSS {peak:.0f} MiB, exit {code}, {wall:.1f} s"
                  + (f" ({last[:110]}…)" if code else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
