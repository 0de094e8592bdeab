"""How long a job's HTML report takes to make and how big it is: the bundled SFT and RL recordings replayed on a
real embedded backend, attached to over HTTP, then ``job_page`` made again and again (the first time pays the
imports: matplotlib's canvas, markdown-it).

    .venv/bin/python benchmarks/report_html.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job
from synth_nb.job.report_html import job_fragment, job_page
from synth_nb.local import start_backend


async def _replayed(url: str, key: str, flow: str) -> Job:
    client = AsyncSynthClient(url, key)
    endpoints = get_flow(flow).endpoints
    doc = await client.create_job(endpoints, {"metadata": {"local_executor": "replay", "recording": flow}})
    job_id = str(doc.get("id") or doc.get("job_id"))
    if endpoints.start:
        await client.start(endpoints, job_id)
    job = Job(job_id, flow, client, endpoints=endpoints, poll_interval=0.2)
    await job.wait(timeout=600)
    await client.aclose()
    return job


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with start_backend(executor_options={"replay": {"speed": 50}}) as backend:
        jobs = [asyncio.run(_replayed(backend.url, backend.api_key, flow)) for flow in ("sft", "rl")]
    print(f"{'job':<10}{'first (s)':>11}{'median (s)':>12}{'page (KB)':>11}{'fragment (KB)':>15}")
    for job in jobs:
        started = time.perf_counter()
        page = job_page(job)
        first = time.perf_counter() - started
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            job_page(job)
            times.append(time.perf_counter() - started)
        fragment = job_fragment(job, leave_out=("chart", "summary", "explorer"))
        print(f"{job.flow:<10}{first:>11.2f}{statistics.median(times):>12.3f}{len(page) / 1024:>11.1f}"
              f"{len(fragment) / 1024:>15.1f}")


if __name__ == "__main__":
    main()
