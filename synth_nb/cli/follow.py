"""Submit plans (or re-attach to a job) and follow the jobs in the terminal until each one ends.

Exit codes: 0 when every job succeeded, 1 when one failed / was cancelled / timed out or a submission
failed, 130 on Ctrl-C (after asking the backend to cancel the jobs, unlike synth-ai 0.2.24).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from synth_nb import pipeline
from synth_nb.cli.printer import LinePrinter, final_block, history
from synth_nb.errors import JobTimeoutError, SynthNbError
from synth_nb.job import Job, JobRegistry
from synth_nb.pipeline import Target
from synth_nb.plan import Plan
from synth_nb.secrets import mask_text

__all__ = ["FollowOptions", "run_attach", "run_submit"]


@dataclass(frozen=True)
class FollowOptions:
    """How to follow: ``--poll/--no-poll``, ``--poll-interval``, ``--poll-timeout``, ``--record``,
    ``--stream-format`` (``chart`` draws live panels when the output is a terminal, lines otherwise)."""

    poll: bool = True
    poll_interval: float = 5.0
    poll_timeout: float | None = None
    record: Path | None = None
    stream_format: str = "cli"

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> FollowOptions:
        record = getattr(args, "record", None)
        return cls(poll=bool(getattr(args, "poll", True)),
                   poll_interval=float(getattr(args, "poll_interval", 5.0) or 5.0),
                   poll_timeout=getattr(args, "poll_timeout", None),
                   record=Path(record) if record else None,
                   stream_format=str(getattr(args, "stream_format", "cli") or "cli"))


@dataclass
class _Run:
    """What one command follows, and where it prints."""

    options: FollowOptions
    secrets: list[str]
    out: TextIO
    registry: JobRegistry
    #: while live chart panels own the terminal, final blocks wait here and print once they stop
    held: list[str] | None = None

    def error(self, text: str) -> None:
        print(mask_text(text, tuple(self.secrets)), file=sys.stderr, flush=True)

    def say(self, text: str) -> None:
        if self.held is not None:
            self.held.append(text)
        else:
            print(text, file=self.out, flush=True)

    def release(self) -> None:
        held, self.held = self.held or [], None
        for text in held:
            self.say(text)


def run_submit(plans: Sequence[Plan], target: Target, api_key: str, options: FollowOptions, *,
               out: TextIO | None = None) -> int:
    """Submit each plan to ``target`` and follow every job to its end (``--no-poll``: print the ids)."""
    run = _Run(options, pipeline.secret_values(api_key, plans), out or sys.stdout, JobRegistry(Path.cwd()))
    return _run_until_done(_submit_and_follow(list(plans), target, api_key, run))


def run_attach(job_id: str, target: Target, api_key: str, options: FollowOptions, *, flow: str | None = None,
               out: TextIO | None = None) -> int:
    """Rebuild a job's history from ``target``, print it and follow the job to its end."""
    run = _Run(options, [api_key], out or sys.stdout, JobRegistry(Path.cwd()))
    return _run_until_done(_attach_and_follow(job_id, flow, target, api_key, run))


def _run_until_done(main: Coroutine[Any, Any, int]) -> int:
    logging.getLogger("stamina").setLevel(logging.ERROR)  # retries are routine; only failures are news
    try:
        return asyncio.run(main)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        return 130


async def _submit_and_follow(plans: list[Plan], target: Target, api_key: str, run: _Run) -> int:
    jobs: list[Job] = []
    results: dict[str, Path | None] = {}
    failed = 0
    for plan in plans:
        try:
            job = await pipeline.submit(plan, target, api_key, registry=run.registry,
                                        poll_interval=run.options.poll_interval)
        except SynthNbError as exc:
            if len(plans) == 1:
                raise
            failed += 1
            run.error(f"error: {plan.config_path or plan.flow}: {exc}")
            continue
        print(f"submitted {plan.flow} job {job.id} to {job.client.base_url}", file=run.out, flush=True)
        jobs.append(job)
        results[job.id] = plan.results_folder
    if not run.options.poll:
        for job in jobs:
            print(job.id, file=run.out, flush=True)
        await _close(jobs)
        return 1 if failed else 0
    succeeded = await _follow(jobs, results, run)
    return 0 if succeeded and not failed else 1


async def _attach_and_follow(job_id: str, flow: str | None, target: Target, api_key: str, run: _Run) -> int:
    job = await pipeline.attach(job_id, target, api_key, flow=flow, registry=run.registry,
                                poll_interval=run.options.poll_interval)
    print(f"attached to {job.flow} job {job.id} ({job.status}, {len(job.events)} events so far)",
          file=run.out, flush=True)
    return 0 if await _follow([job], {}, run) else 1


def _draws_chart(run: _Run) -> bool:
    isatty = getattr(run.out, "isatty", None)
    return run.options.stream_format == "chart" and callable(isatty) and bool(isatty())


def _print_lines(jobs: list[Job], run: _Run) -> None:
    several = len(jobs) > 1
    for job in jobs:
        printer = LinePrinter(job, run.secrets, prefix=f"{job.id} " if several else "", out=run.out)
        for update in history(job):
            printer(update)
        job.add_listener(printer)


async def _follow(jobs: list[Job], results: dict[str, Path | None], run: _Run) -> bool:
    """Show every job's history and live updates (lines, or live chart panels), record them, and wait
    for all of them to end."""
    recorders = pipeline.start_recording(jobs, run.options.record, run.secrets)
    board = None
    if _draws_chart(run):
        from synth_nb.cli.live_chart import ChartBoard

        board = ChartBoard(jobs, run.secrets, out=run.out)
        run.held = []
    else:
        _print_lines(jobs, run)
    watching = asyncio.ensure_future(asyncio.gather(*(_watch(job, results.get(job.id), run) for job in jobs)))
    try:
        if board is not None:
            await board.run(watching)
            run.release()
        outcomes = await watching
    except asyncio.CancelledError:
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await _cancel_all(jobs, run)
        raise
    finally:
        for recorder in recorders:
            recorder.close()
        for job in jobs:
            await job.stop_monitoring()
        await _close(jobs)
    return all(outcomes)


async def _watch(job: Job, results_folder: Path | None, run: _Run) -> bool:
    timeout = run.options.poll_timeout
    try:
        await job.wait(timeout=timeout)
    except JobTimeoutError as exc:
        run.say(final_block(job, run.secrets, note=f"timed out after {timeout:g}s; still running"))
        run.error(str(exc))
        return False
    except SynthNbError as exc:
        run.error(f"error: following job {job.id} failed: {exc}")
        return False
    run.say(final_block(job, run.secrets))
    if results_folder is not None and not _write_results(job, results_folder, run):
        return False
    return job.succeeded


def _write_results(job: Job, folder: Path, run: _Run) -> bool:
    """The flow's result files (prompt learning: ``summary.md`` and its curve) in ``folder/<job id>/``."""
    from synth_nb.flows import get_flow

    try:
        path = get_flow(job.flow).write_results(job, folder / job.id)
    except OSError as exc:
        run.error(f"error: could not write results to {folder}: {exc}")
        return False
    if path is not None:
        run.say(f"  summary:  {path}")
    return True


async def _cancel_all(jobs: list[Job], run: _Run) -> None:
    pending = [job for job in jobs if not job.done]
    if not pending:
        return
    run.error(f"interrupted: asking the backend to cancel {', '.join(j.id for j in pending)}")

    async def one(job: Job) -> None:
        try:
            status = await asyncio.wait_for(job.cancel(timeout=10.0), 15.0)
            run.error(f"job {job.id}: {status}")
        except (SynthNbError, TimeoutError) as exc:
            run.error(f"job {job.id}: cancel not confirmed ({exc})")

    await asyncio.gather(*(one(job) for job in pending))


async def _close(jobs: list[Job]) -> None:
    for job in jobs:
        await job.client.aclose()
