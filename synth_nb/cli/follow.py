"""Follow jobs in the terminal until each one ends: the jobs this command submits, or one it re-attaches to.

Exit codes: 0 when every job succeeded, 1 when one failed / was cancelled / timed out or a submission
failed, 130 on Ctrl-C.

Ctrl-C while submitting or following jobs this command created cancels every one of them, each within
``synth_nb.job.interrupt.INTERRUPT_GRACE`` seconds, and exits (unlike synth-ai 0.2.24); a second Ctrl-C
stops those waits too. Ctrl-C while following a job it re-attached to only stops watching: the job keeps
running, and the message says how to cancel it (``synth-nb cancel JOB_ID``).
While the backend does not answer, stderr says so once a minute (``synth_nb.cli.outage``); when the embedded
backend's process is gone, following ends at once with exit 1 and what to run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TextIO

from synth_nb.cli.outage import report_outages
from synth_nb.cli.printer import final_block
from synth_nb.cli.quiet import is_quiet, line_printer
from synth_nb.cli.say import note
from synth_nb.errors import JobTimeoutError, SynthNbError
from synth_nb.flows.chart_png import import_in_background
from synth_nb.job import Job, JobRegistry
from synth_nb.job.interrupt import UNCONFIRMED, cancel_job_after_interrupt
from synth_nb.pipeline import actions
from synth_nb.pipeline.actions import Attachment, Batch
from synth_nb.pipeline.request import Request
from synth_nb.secrets import mask_text
from synth_nb.untrusted import inert, inert_lines

__all__ = ["note", "run_attach", "run_submit"]

#: how often an outage notice is repeated while the backend does not answer
OUTAGE_EVERY = 60.0


@dataclass
class _Run:
    """What one command follows (``--poll-timeout``, ``--stream-format``, ``--all-events`` of its request),
    and where it prints."""

    request: Request
    secrets: list[str]
    out: TextIO
    registry: JobRegistry
    outage_every: float = OUTAGE_EVERY
    #: while live chart panels own the terminal, final blocks wait here and print once they stop
    held: list[str] | None = None
    #: True for the jobs this command created: Ctrl-C cancels them; False: it only stops watching
    owns: bool = True
    #: when ``--poll-timeout`` ends (``time.monotonic``), set when its count started before following
    deadline: float | None = None

    def wait_budget(self) -> float | None:
        """What is left of ``--poll-timeout`` for waiting on the jobs."""
        timeout = self.request.poll_timeout
        if timeout is None or self.deadline is None:
            return timeout
        return max(0.001, self.deadline - time.monotonic())

    def error(self, text: str) -> None:
        print(mask_text(inert_lines(text), tuple(self.secrets)), file=sys.stderr, flush=True)

    def say(self, text: str) -> None:
        if self.held is not None:
            self.held.append(text)
        else:
            print(inert_lines(text), file=self.out, flush=True)

    def release(self) -> None:
        held, self.held = self.held or [], None
        for text in held:
            self.say(text)


def run_submit(batch: Batch, request: Request, *, out: TextIO | None = None,
               outage_every: float = OUTAGE_EVERY) -> int:
    """Send ``batch`` (``synth_nb.pipeline.actions.send``) and follow every job to its end (``--no-poll``: print
    the ids, and only them, on stdout)."""
    run = _Run(request, batch.secrets(), out or sys.stdout, JobRegistry(request.folder), outage_every)
    return _run_until_done(_submit_and_follow(batch, run))


def run_attach(found: Attachment, request: Request, *, out: TextIO | None = None) -> int:
    """Rebuild a job's history, print it and follow the job to its end. Ctrl-C detaches: the job keeps running."""
    run = _Run(request, list(found.hidden), out or sys.stdout, found.registry, owns=False)
    return _run_until_done(_attach_and_follow(found, run), job_id=found.job_id)


def _run_until_done(main: Coroutine[Any, Any, int], job_id: str | None = None) -> int:
    """``job_id``: a re-attached job, which Ctrl-C leaves running."""
    logging.getLogger("stamina").setLevel(logging.ERROR)  # retries are routine; only failures are news
    try:
        return asyncio.run(main)
    except KeyboardInterrupt:
        if job_id is not None:
            print(f"interrupted: stopped watching job {job_id}; it keeps running. Cancel it with: "
                  f"synth-nb cancel {job_id}", file=sys.stderr, flush=True)
        else:
            print("interrupted", file=sys.stderr, flush=True)
        return 130


async def _submit_and_follow(batch: Batch, run: _Run) -> int:
    jobs: list[Job] = []
    failed: list[str] = []
    request = run.request

    def submitted(job: Job, item: Any, _record: Any) -> None:
        # with --no-poll stdout holds the job ids alone (``JOB=$(synth-nb train … --no-poll)``)
        print(f"submitted {job.flow} job {job.id} to {job.client.shown_url}",
              file=run.out if request.poll else sys.stderr, flush=True)
        if request.poll and item.plan.results_folder is not None:  # its chart is drawn when it ends
            import_in_background()

    def not_submitted(item: Any, exc: SynthNbError) -> None:
        failed.append(str(item.path))
        run.error(f"error: {item.plan.config_path or item.plan.flow}: {exc}")

    before = _registered(run)
    try:
        await actions.send(batch, request, say=note, jobs=jobs, on_job=submitted, on_failure=not_submitted)
    except asyncio.CancelledError:  # the jobs submitted so far are cancelled; the one being submitted was
        _say_cancelled_in_submission(run, before, jobs)
        await _cancel_all(jobs, run)
        await _close(jobs)
        raise
    if not request.poll:
        for job in jobs:
            print(job.id, file=run.out, flush=True)
        await _close(jobs)
        return 1 if failed else 0
    succeeded = await _follow(jobs, run)
    return 0 if succeeded and not failed else 1


def _registered(run: _Run) -> dict[str, str | None]:
    """Job id -> status of every job in this folder's registry (empty when it cannot be read)."""
    try:
        return {record.job_id: record.status for record in run.registry.list()}
    except (OSError, SynthNbError):
        return {}


def _say_cancelled_in_submission(run: _Run, before: dict[str, str | None], jobs: list[Job]) -> None:
    """The job an interrupted submission created (and cancelled), found in the registry."""
    known = {job.id for job in jobs}
    for job_id, status in _registered(run).items():
        if job_id not in before and job_id not in known:
            run.error(f"interrupted while submitting: job {job_id}: {status or UNCONFIRMED}")


async def _attach_and_follow(found: Attachment, run: _Run) -> int:
    """Rebuild the job's history and follow it, both within ``--poll-timeout``."""
    timeout = run.request.poll_timeout
    run.deadline = None if timeout is None else time.monotonic() + timeout
    job = await actions.attach(found, run.request, say=note)
    state = f"ended: {inert(job.status)}, {len(job.events)} events" if job.terminal else (
        f"{inert(job.status)}, {len(job.events)} events so far")
    print(f"attached to {job.flow} job {job.id} ({state})", file=run.out, flush=True)
    return 0 if await _follow([job], run) else 1


def _draws_chart(run: _Run) -> bool:
    isatty = getattr(run.out, "isatty", None)
    return run.request.stream_format == "chart" and callable(isatty) and bool(isatty())


def _print_lines(jobs: list[Job], run: _Run) -> None:
    several = len(jobs) > 1
    quiet = is_quiet(run.out, run.request.stream_format)
    for job in jobs:
        printer = line_printer(job, run.secrets, quiet=quiet, prefix=f"{job.id} " if several else "", out=run.out)
        printer.history(all_events=run.request.all_events)
        job.add_listener(printer)


async def _follow(jobs: list[Job], run: _Run) -> bool:
    """Follow the jobs (``actions.follow``: watchdog, results, reporters, recordings), show every job's history
    and live updates (lines, or live chart panels), and wait for all of them to end."""
    following = actions.follow(jobs, run.request, secrets=run.secrets)
    board = None
    if _draws_chart(run):
        from synth_nb.cli.live_chart import ChartBoard  # measured: 15 ms, paid only when a chart is drawn

        board = ChartBoard(jobs, run.secrets, out=run.out)
        run.held = []
    else:
        _print_lines(jobs, run)
    for job in jobs:
        if job.watchdog is not None:
            meters = "; ".join(m.line() for m in job.watchdog.meters())
            print(f"watchdog on {job.id}: {meters}", file=run.out, flush=True)
    watching = asyncio.ensure_future(asyncio.gather(*(_watch(job, run) for job in jobs)))
    # ends by itself only when the embedded backend's process is gone: nothing more can come then
    outages = asyncio.ensure_future(report_outages(jobs, run.error, every=run.outage_every))
    either: set[asyncio.Future[Any]] = {watching, outages}
    ended = asyncio.ensure_future(asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED))
    try:
        if board is not None:
            await board.run(ended)
            run.release()
        await ended
        if not watching.done():
            watching.cancel()
            watching.add_done_callback(lambda done: done.cancelled() or done.exception())
            outages.result()  # raises the notice's own failure, if that is what ended it
            return False
        outcomes = await watching
        for reporter in following.reporters:  # --report-to: where each tracker holds the job, how to look
            run.say(reporter.said())
    except asyncio.CancelledError:
        watching.cancel()
        # the chart board awaited ``watching`` only indirectly: read its end so asyncio does not report it
        watching.add_done_callback(lambda done: done.cancelled() or done.exception())
        if run.owns:  # watching a job re-attached to never cancels it
            with contextlib.suppress(asyncio.CancelledError):
                await _cancel_all(jobs, run)
        raise
    finally:
        outages.cancel()
        following.close()
        for job in jobs:
            await job.stop_monitoring()
        await _close(jobs)
    return all(outcomes)


async def _watch(job: Job, run: _Run) -> bool:
    timeout = run.request.poll_timeout
    curve = not _draws_chart(run)  # the live chart was on screen: no ASCII curve after it
    try:
        await job.wait(timeout=run.wait_budget())
    except JobTimeoutError as exc:
        run.say(final_block(job, run.secrets, note=f"timed out after {timeout:g}s; still running", timed_out=timeout,
                            curve=curve))
        run.error(str(exc))
        return False
    except SynthNbError as exc:
        run.error(f"error: following job {job.id} failed: {exc}")
        return False
    stopped = job.watchdog is not None and job.watchdog.tripped is not None
    results = job.write_results()  # written as the job ended (the follow stage): what, and where
    run.say(final_block(job, run.secrets, results=results, curve=curve))
    for problem in (results.problem, results.bundle_problem):
        if problem is not None:
            run.error(f"error: {problem}")
    ok = job.succeeded or (stopped and job.status == "cancelled")  # stopped at the limit asked for
    return ok and results.problem is None


async def _cancel_all(jobs: list[Job], run: _Run) -> None:
    """Cancel every unfinished job at once, each within the interrupt grace, and say how each ended."""
    pending = [job for job in jobs if not job.done]
    if not pending:
        return
    run.error(f"interrupted: asking the backend to cancel {', '.join(j.id for j in pending)} "
              "(Ctrl-C again to stop waiting)")
    statuses = await asyncio.gather(*(cancel_job_after_interrupt(job) for job in pending))
    for job, status in zip(pending, statuses, strict=True):
        check = f" (check with: synth-nb attach {job.id})" if status == UNCONFIRMED else ""
        run.error(f"job {job.id}: {status}{check}")


async def _close(jobs: list[Job]) -> None:
    for job in jobs:
        await job.client.aclose()
