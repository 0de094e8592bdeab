"""CPU per policy call on the upstream path: the backend's ``UpstreamPolicy`` posting chat completions.

With ``local_policy = "upstream"`` every rollout's policy call is forwarded by the backend to an
OpenAI-compatible server through ``UpstreamPolicy.complete`` (httpx). The server here is a small
Starlette app answering with the keyword policy, in a process of its own, so the CPU measured is the
caller's alone. Each checkout (this one, and ``--before PATH``) runs its caller in a fresh process,
interleaved, and prints calls/s and CPU microseconds per call (anchor: the same figure before the URL was
parsed once).

Run: ``python benchmarks/policy_calls.py [--calls 3000] [--repeats 3] [--before ../main]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

SERVER = """
import socket, sys, uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from synth_nb.local.policies.keyword import KeywordPolicy

policy = KeywordPolicy()

async def complete(request: Request) -> JSONResponse:
    return JSONResponse(policy.complete(await request.json()))

sock = socket.socket()
sock.bind(("127.0.0.1", 0))
print(sock.getsockname()[1], flush=True)
app = Starlette(routes=[Route("/v1/chat/completions", complete, methods=["POST"])])
uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
"""

CALLER = """
import sys, time
from synth_nb.local.policies.upstream import UpstreamPolicy
from synth_nb.local.examples.banking import load_dataset

data = load_dataset()
request = {"model": "m", "messages": data.render_messages("I lost my card at the station"),
           "tools": [{"type": "function", "function": {"name": "banking_classify",
                      "parameters": {"properties": {"intent": {"enum": list(data.intents)}}}}}]}
policy = UpstreamPolicy(sys.argv[1], None)
for _ in range(200):
    policy.complete(request)
calls = int(sys.argv[2])
cpu, wall = time.process_time(), time.perf_counter()
for _ in range(calls):
    policy.complete(request)
print(calls / (time.perf_counter() - wall), 1e6 * (time.process_time() - cpu) / calls)
"""


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", type=Path, default=None, help="another checkout to measure, interleaved")
    args = parser.parse_args()
    trees = {"this": HERE} | ({"before": args.before.resolve()} if args.before else {})
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True, env=_env(HERE),
                              cwd=tempfile.gettempdir())
    assert server.stdout is not None
    url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
    rates: dict[str, list[float]] = {name: [] for name in trees}
    cpu: dict[str, list[float]] = {name: [] for name in trees}
    try:
        for repeat in range(args.repeats):
            for name, tree in trees.items():
                out = subprocess.run([sys.executable, "-c", CALLER, url, str(args.calls)], env=_env(tree),
                                     cwd=tempfile.gettempdir(),  # not a checkout: PYTHONPATH picks the tree
                                     capture_output=True, text=True, check=True).stdout.split()
                rates[name].append(float(out[0]))
                cpu[name].append(float(out[1]))
                print(f"  run {repeat + 1} {name}: {rates[name][-1]:.0f} calls/s, {cpu[name][-1]:.0f} µs CPU per call",
                      flush=True)
    finally:
        server.terminate()
        server.wait()
    print(f"\nUpstreamPolicy.complete over HTTP to a local server, {args.calls} calls, median of {args.repeats}")
    for name in trees:
        print(f"{name:8} {statistics.median(rates[name]):8.0f} calls/s {statistics.median(cpu[name]):8.0f} µs CPU/call"
              f"  ({trees[name]})")
    if "before" in trees:
        saved = 1 - statistics.median(cpu["this"]) / statistics.median(cpu["before"])
        print(f"CPU per call: {saved:.0%} less than before")
    return 0


if __name__ == "__main__":
    sys.exit(main())
