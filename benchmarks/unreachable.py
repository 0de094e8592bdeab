"""How long the client takes to give up on a backend that never answered (nothing listens at the URL).

A refused connection is tried again every half second for ``FIRST_CONTACT_SECONDS`` (2 s); the full retry
budget (6 attempts, backoff up to 10 s) is kept for a backend that answered before. Printed: the client
alone (one status request), and ``synth-nb attach`` / ``synth-nb train --yes`` end to end, beside the same
process's start-up (``synth-nb attach --help``). Before: about 10 s of silence, then exit 1.

Run: ``python benchmarks/unreachable.py [--repeats 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synth_nb.client import AsyncSynthClient
from synth_nb.errors import NetworkError
from synth_nb.flows import get_flow

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from minimal_configs import MINIMAL_GEPA  # noqa: E402


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


async def client_gives_up(url: str) -> float:
    async with AsyncSynthClient(url, "sk_bench_0123456789abcdef") as client:
        started = time.perf_counter()
        try:
            await client.get_status(get_flow("prompt_learning").endpoints, "pl_0123456789abcdef")
        except NetworkError:
            return time.perf_counter() - started
    raise RuntimeError("something answered")


def command_seconds(args: list[str], folder: Path) -> tuple[float, int]:
    env = {**os.environ, "SYNTH_API_KEY": "sk_bench_0123456789abcdef", "ENVIRONMENT_API_KEY": "sk_env_bench_0123456789",
           "SYNTH_SKIP_TASK_APP_HEALTH_CHECK": "1"}
    env.pop("SYNTH_BACKEND_OVERRIDE", None)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "synth_nb", *args], cwd=folder, env=env, capture_output=True,
                          check=False)
    return time.perf_counter() - started, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="synth-nb-unreachable-") as name:
        folder = Path(name)
        (folder / "cfg.toml").write_text(MINIMAL_GEPA, encoding="utf-8")
        client = [asyncio.run(client_gives_up(closed_port_url())) for _ in range(args.repeats)]
        print(f"client alone: gives up after {statistics.median(client):.2f} s (median of {args.repeats})")
        startup = statistics.median(command_seconds(["attach", "--help"], folder)[0] for _ in range(args.repeats))
        for label, command in (("synth-nb attach", ["attach", "pl_0123456789abcdef"]),
                               ("synth-nb train --yes", ["train", "cfg.toml", "--yes"])):
            runs = [command_seconds([*command, "--backend", closed_port_url()], folder) for _ in range(args.repeats)]
            codes = sorted({code for _, code in runs})
            print(f"{label} to a closed port: {statistics.median(s for s, _ in runs):.2f} s, exit {codes} "
                  f"(process start-up alone: {startup:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
