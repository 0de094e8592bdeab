"""What reading a job's run-health warnings costs (``synth_nb.job.health.health_of``): a 10,000-step RL job
(one ``rl.train.step`` event with the embedded backend's group fields and four metric points per step, an
evaluation every 100 steps) and a 10,000-step SFT job (train loss per step, validation every 100 steps).

The panel reads them at most every 5 s while a job runs (``LiveHealth``), and once more when it ends (its
``Ending``, shared by the final block, ``summary.md`` and ``run.json``); this is the CPU each reading takes.

Run: ``python benchmarks/health.py [--repeats 5] [--steps 10000]``. Printed on this branch, on a loaded 2-core
machine: RL 180 ms median (320 ms max; building the 10,000 step events is most of it), SFT 6 ms; before the
series were read from the metric log's columns (every point and event built), RL took 950 ms and SFT 70 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time

from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job
from synth_nb.job.health import health_of
from synth_nb.records import Event, MetricPoint


def _job(job_id: str, flow: str) -> Job:
    return Job(job_id, flow, AsyncSynthClient("http://127.0.0.1:9", "k"), endpoints=get_flow(flow).endpoints)


def rl_job(steps: int) -> Job:
    job = _job("job_bench_rl", "rl")
    for step in range(1, steps + 1):
        reward = min(0.9, 0.1 + step / steps)
        job.ingest_event(Event(seq=step, type="rl.train.step", message=f"step {step}", data={
            "step": step, "total_steps": steps, "reward_mean": reward, "loss": 0.1, "kl": 0.01, "rollouts": 32,
            "completion_tokens_mean": 12.0, "groups": 4, "zero_variance_groups": step % 2,
            "group_seeds": list(range(4 * step, 4 * step + 4)),
            "winning_completions": [f"{step:06x}{g:06x}" for g in range(4)]}))
        for name, value in (("train.reward_mean", reward), ("train.loss", 0.1), ("train.kl", 0.01)):
            job.ingest_metric(MetricPoint(name=name, step=step, value=value))
        if step % 100 == 0:
            job.ingest_metric(MetricPoint(name="eval.reward_mean", step=step, value=reward))
    return job


def sft_job(steps: int) -> Job:
    job = _job("job_bench_sft", "sft")
    for step in range(1, steps + 1):
        job.ingest_metric(MetricPoint(name="train.loss", step=step, value=2.0 / (1 + step / 500)))
        if step % 100 == 0:
            job.ingest_metric(MetricPoint(name="val.loss", step=step, value=2.2 / (1 + step / 600)))
    return job


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10_000)
    args = parser.parse_args()
    for name, job in (("RL", rl_job(args.steps)), ("SFT", sft_job(args.steps))):
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            warnings = health_of(job)
            times.append(time.perf_counter() - start)
        print(f"{name}: {len(job.events):,} events, {len(job.metrics):,} metric points -> {len(warnings)} warning(s); "
              f"health_of median {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
