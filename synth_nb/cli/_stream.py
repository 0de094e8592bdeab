"""Submit plans and follow the jobs in the terminal: one line per meaningful event, a final status block.

Exit codes: 0 when every job succeeded, 1 when one failed / was cancelled / timed out, 130 on Ctrl-C
(after asking the backend to cancel the jobs, unlike synth-ai 0.2.24). Noise is hidden as 0.2.24 does
(SFT bookkeeping events, RL "modal"/"hatchet" chatter, prompt-learning internals; spec §9.3-9.4).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import time
from pathlib import Path
from typing import TextIO

from pydantic import SecretStr

from synth_nb.client import AsyncSynthClient
from synth_nb.errors import ConfigError, JobTimeoutError, SynthNbError
from synth_nb.flows import is_noise
from synth_nb.job import Job, JobRegistry, JobUpdate, Recorder, attach, submit
from synth_nb.plan import Plan
from synth_nb.records import Event, MetricPoint
from synth_nb.secrets._mask import mask_text

__all__ = ["LinePrinter", "format_event", "is_hidden", "run_plans"]

def is_hidden(flow: str, event: Event) -> bool:
    """True for events 0.2.24's CLI hides for this flow (the job still records them)."""
    return is_noise(flow, event)


def _clock() -> str:
    return time.strftime("%H:%M:%S")


def format_event(event: Event) -> list[str]:
    """``[seq] type (level): message`` plus error details and the traceback tail for failures."""
    level = f" ({event.level})" if event.level and event.level != "info" else ""
    line = f"[{event.seq}] {event.type}{level}: {event.message}".rstrip().rstrip(":")
    lines = [line]
    if event.level == "error" or event.type.endswith(".failed"):
        detail = event.data.get("detail") or event.data.get("error") or event.data.get("error_detail")
        if detail and str(detail) != event.message:
            lines.append(f"    Error details: {detail}")
        trace = event.data.get("traceback") or event.data.get("stack")
        if isinstance(trace, str):
            lines += [f"    {ln}" for ln in [t for t in trace.splitlines() if t.strip()][-5:]]
    return lines


def format_metric(point: MetricPoint) -> str:
    n = point.data.get("n")
    return f"[metric] {point.name}={point.value:.4f} (step={point.step})" + (f" n={n}" if n is not None else "")


class LinePrinter:
    """Job listener that prints one masked line per meaningful update.

    Metric points are thinned to at most one line per metric name every ``metric_every`` seconds (a
    training loss per step would drown the events); the final block repeats the last value of each.
    """

    def __init__(self, job: Job, secrets: list[str], *, prefix: str = "", out: TextIO | None = None,
                 metric_every: float = 1.0) -> None:
        self.job = job
        self.secrets = tuple(s for s in secrets if s)
        self.prefix = prefix
        self.out = out or sys.stdout
        self.metric_every = metric_every
        self._metric_printed: dict[str, float] = {}

    def emit(self, text: str) -> None:
        for line in text.splitlines() or [""]:
            print(f"[{_clock()}] {self.prefix}{mask_text(line, self.secrets)}", file=self.out, flush=True)

    def __call__(self, update: JobUpdate) -> None:
        if update.kind == "status":
            self.emit(f"status={update.status}")
        elif update.kind == "event" and update.event is not None:
            if not is_hidden(self.job.flow, update.event):
                self.emit("\n".join(format_event(update.event)))
        elif update.kind == "metric" and update.metric is not None:
            now = time.monotonic()
            if now - self._metric_printed.get(update.metric.name, -1e9) >= self.metric_every:
                self._metric_printed[update.metric.name] = now
                self.emit(format_metric(update.metric))


def final_block(job: Job, secrets: list[str], note: str = "") -> str:
    doc = job.status_doc
    lines = [f"Final status: {job.status}" + (f" ({note})" if note else ""),
             f"  job:      {job.id} ({job.flow}{'/' + job.algorithm if job.algorithm else ''})",
             f"  backend:  {job.backend_url}",
             f"  events:   {len(job.events)}   metrics: {len(job.metrics)}"]
    latest: dict[str, MetricPoint] = {}
    for point in job.metrics:
        if point.name not in latest or point.step >= latest[point.name].step:
            latest[point.name] = point
    if latest:
        lines.append("  last metrics: " + ", ".join(f"{p.name}={p.value:.4f} (step {p.step})"
                                                    for p in latest.values()))
    for key in ("fine_tuned_model", "best_score", "error"):
        if doc.get(key) not in (None, ""):
            lines.append(f"  {key}: {doc[key]}")
    return mask_text("\n".join(lines), tuple(s for s in secrets if s))


def _record_path(base: str, job: Job, several: bool) -> Path:
    path = Path(base)
    return path.with_name(f"{path.stem}-{job.id}{path.suffix or '.jsonl'}") if several else path


def write_results(job: Job, folder: Path, out: TextIO) -> Path | None:
    """Prompt learning: write ``summary.md`` and the curve PNG into ``folder/<job id>/``."""
    if job.flow != "prompt_learning":
        return None
    path = job.export_summary(folder / job.id)
    print(f"  summary:  {path}", file=out, flush=True)
    return path


async def _watch(job: Job, timeout: float | None, secrets: list[str], out: TextIO,
                 results_folder: Path | None = None) -> bool:
    try:
        await job.wait(timeout=timeout)
    except JobTimeoutError as exc:
        print(final_block(job, secrets, note=f"timed out after {timeout:g}s; still running"), file=out, flush=True)
        print(mask_text(str(exc), tuple(secrets)), file=sys.stderr, flush=True)
        return False
    except SynthNbError as exc:
        print(f"error: following job {job.id} failed: {mask_text(str(exc), tuple(secrets))}",
              file=sys.stderr, flush=True)
        return False
    print(final_block(job, secrets), file=out, flush=True)
    if results_folder is not None:
        try:
            write_results(job, results_folder, out)
        except OSError as exc:
            print(f"error: could not write results to {results_folder}: {exc}", file=sys.stderr, flush=True)
            return False
    return job.succeeded


async def _cancel_all(jobs: list[Job], secrets: list[str]) -> None:
    pending = [job for job in jobs if not job.done]
    if not pending:
        return
    print(f"interrupted: asking the backend to cancel {', '.join(j.id for j in pending)}", file=sys.stderr,
          flush=True)

    async def one(job: Job) -> None:
        try:
            status = await asyncio.wait_for(job.cancel(timeout=10.0), 15.0)
            print(f"job {job.id}: {status}", file=sys.stderr, flush=True)
        except (SynthNbError, TimeoutError) as exc:
            print(f"job {job.id}: cancel not confirmed ({mask_text(str(exc), tuple(secrets))})", file=sys.stderr,
                  flush=True)

    await asyncio.gather(*(one(job) for job in pending))


async def _main(plans: list[Plan], args: argparse.Namespace, backend_url: str, api_key: str,
                secrets: list[str], out: TextIO) -> int:
    poll_interval = float(getattr(args, "poll_interval", 5.0) or 5.0)
    registry = JobRegistry(Path.cwd())
    jobs: list[Job] = []
    results: dict[str, Path | None] = {}
    failed_submissions = 0
    async with AsyncSynthClient(backend_url, api_key) as client:
        attach_id = getattr(args, "attach", None)
        if attach_id:
            job = await attach(attach_id, client, flow=getattr(args, "flow", None), registry=registry,
                               poll_interval=poll_interval)
            print(f"attached to {job.flow} job {job.id} ({job.status}, {len(job.events)} events so far)",
                  file=out, flush=True)
            jobs.append(job)
        for plan in plans:
            try:
                job = await submit(plan, client, registry=registry, poll_interval=poll_interval)
            except SynthNbError as exc:
                if len(plans) == 1 and not jobs:
                    raise
                failed_submissions += 1
                print(f"error: {plan.config_path or plan.flow}: {mask_text(str(exc), tuple(secrets))}",
                      file=sys.stderr, flush=True)
                continue
            print(f"submitted {plan.flow} job {job.id} to {client.base_url}", file=out, flush=True)
            jobs.append(job)
            results[job.id] = plan.results_folder
        if not getattr(args, "poll", True):
            for job in jobs:
                print(job.id, file=out, flush=True)
            return 1 if failed_submissions else 0
        several = len(jobs) > 1
        recorders = []
        record = getattr(args, "record", None)
        for job in jobs:
            if record:
                recorder = Recorder(_record_path(record, job, several), secrets=secrets)
                recorder.follow(job)
                recorders.append(recorder)
            printer = LinePrinter(job, secrets, prefix=f"{job.id} " if several else "", out=out)
            for update in _history(job):
                printer(update)
            job.add_listener(printer)
        timeout = getattr(args, "poll_timeout", None)
        try:
            outcomes = await asyncio.gather(*(_watch(job, timeout, secrets, out, results.get(job.id))
                                              for job in jobs))
        except asyncio.CancelledError:
            with contextlib.suppress(asyncio.CancelledError):
                await _cancel_all(jobs, secrets)
            raise
        finally:
            for recorder in recorders:
                recorder.close()
            for job in jobs:
                await job.stop_monitoring()
    return 0 if all(outcomes) and not failed_submissions else 1


def _history(job: Job) -> list[JobUpdate]:
    """What an attached job already has, so the printer shows it before live updates."""
    if not job.events and not job.metrics:
        return []
    return [JobUpdate("status", job.status)] + [JobUpdate("event", job.status, event=e) for e in job.events]


def run_plans(plans: list[Plan], args: argparse.Namespace, backend_url: str, api_key: str, *,
              out: TextIO | None = None) -> int:
    """Submit each plan (or re-attach with ``args.attach``) and follow until every job ends."""
    out = out or sys.stdout
    logging.getLogger("stamina").setLevel(logging.ERROR)  # retries are routine; only failures are news
    if getattr(args, "list_jobs", False):
        from synth_nb.cli.jobs import print_jobs

        return print_jobs(JobRegistry(Path.cwd()), out=out)
    if backend_url == "local":
        raise ConfigError("re-attaching needs the URL of a running backend, not 'local'",
                          key="backend", hint="start one with `synth-nb backend` and pass --backend URL")
    secrets = [api_key] + [s.get_secret_value() if isinstance(s, SecretStr) else str(s)
                           for plan in plans for s in plan.secrets]
    try:
        return asyncio.run(_main(plans, args, backend_url, api_key, secrets, out))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        return 130


