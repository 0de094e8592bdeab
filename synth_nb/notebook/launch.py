"""Run a ``%synth_train`` request's action (``synth_nb.pipeline.actions``) and hand its jobs to the notebook.

Where a job lives matters because its client works on one event loop:

* the wizard submits from a task on the kernel's loop, so its jobs live there from the start;
* a magic cannot await, so it submits (or re-attaches) on the process's background loop
  (``kernel_loop.run_sync``). With ``--wait`` (or headless) the panel blocks the cell on that loop.
  Then, and at once in every other case, each job moves to a fresh copy of its client
  (``job.rebind(job.client.clone())``), so later cells can ``await job.wait()``, ``job.cancel()`` and
  ``job.refresh()`` on the kernel's loop and read ``job.metrics_df()``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from synth_nb.errors import ConfigError
from synth_nb.job.describe import format_phase
from synth_nb.notebook.kernel_loop import run_sync
from synth_nb.notebook.monitor_view import _event_line, is_error, is_noise
from synth_nb.pipeline import actions
from synth_nb.pipeline.actions import Batch
from synth_nb.pipeline.preview import warning_lines
from synth_nb.pipeline.request import Request

if TYPE_CHECKING:
    from synth_nb.client import AsyncSynthClient
    from synth_nb.job import Job
    from synth_nb.notebook.panel import MonitorPanel
    from synth_nb.pipeline.card import PreflightCard
    from synth_nb.pipeline.fork import Fork

__all__ = ["attach_job", "fork_of", "hand_over", "print_history", "rerun_job", "show_cards", "show_live", "submit_and_show"]

#: lines per write when a cell prints a whole history
HISTORY_CHUNK = 2000


def submit_and_show(batch: Batch, request: Request, *, widgets: bool) -> list[Job]:
    """The magic's ``--yes`` path: send every plan (on the background loop), then hand the jobs to the panels."""
    for line in warning_lines(batch.prepared):  # a typo'd key must not train silently
        print(line)
    jobs = run_sync(actions.send(batch, request, say=print))
    for job in jobs:
        print(f"submitted {job.flow} job {job.id}" + (f" (re-run of {batch.parent})" if batch.parent else ""))
    return hand_over(jobs, request, secrets=batch.secrets(), widgets=widgets)


def show_cards(request: Request) -> list[PreflightCard]:
    """``--check``: display each config's pre-flight card (static HTML, kept in the saved notebook); with
    ``--rerun``, the card of the re-run's plan.

    Nothing is submitted; the cards are returned, so ``cards[0].ok`` can gate a later cell.
    """
    from IPython.display import display

    from synth_nb.secrets import mask_text

    checked = actions.check(request)
    if checked.notes:
        print(mask_text("\n".join(checked.notes), tuple(checked.hidden)))
    for card in checked.cards:
        display(card)
    return checked.cards


def rerun_job(request: Request, *, widgets: bool) -> Job | None:
    """``--rerun JOB_ID``: the job's plan again from its bundle, once the diff against it shows empty.

    A difference (config, dataset or plan) is printed and raised as a ``ConfigError``; nothing is sent.
    With ``--dry-run`` the diff is all there is (None is returned).
    """
    rerunning = actions.rerun(request)
    print("\n".join(rerunning.lines()))
    if not rerunning.sendable:
        raise ConfigError(f"job {request.rerun} was not re-run: the config, a dataset or the plan differs "
                          "(shown above)")
    if request.dry_run:
        print(f"dry run: the re-run of {request.rerun} was not sent")
        return None
    return submit_and_show(rerunning.batch, rerunning.request, widgets=widgets)[0]


def fork_of(request: Request) -> Fork:
    """``--fork JOB_ID``: the job's config, overrides and backend from its bundle; flags given beat the parent's.

    The magic opens the wizard on it (its Preview diffed against the job), or headless prints where the
    config is and the line that submits it.
    """
    return actions.fork(request, copy=False)


def attach_job(request: Request, *, widgets: bool) -> Job:
    """``--attach JOB_ID``: rebuild the job's history from its backend and show its panel.

    Interrupting a blocked cell only stops watching: the job keeps running (``job.cancel()`` cancels it).
    """
    found = actions.attachment(request)
    job = run_sync(actions.attach(found, request, say=print))
    if request.all_events:
        print_history(job)
    return hand_over([job], request, secrets=found.hidden, widgets=widgets, owned=False)[0]


def print_history(job: Job, out: TextIO | None = None) -> None:
    """``--all-events``: the attached job's phases as ``synth-nb attach`` prints them, then every event it had,
    one line each as its panel lists them, written a chunk at a time (the panel itself shows the newest few)."""
    out = out or sys.stdout
    chunk: list[str] = [f"  {format_phase(entry)}" for entry in job.timeline]
    for event in job.events.models(job.events.snapshot()):
        if not is_noise(job.flow, event):
            chunk.append(("! " if is_error(event) else "  ") + _event_line(event))
            if len(chunk) >= HISTORY_CHUNK:
                out.write("\n".join(chunk) + "\n")
                chunk = []
    if chunk:
        out.write("\n".join(chunk) + "\n")
    out.flush()


def hand_over(jobs: list[Job], request: Request, *, secrets: Sequence[str], widgets: bool,
              owned: bool = True) -> list[Job]:
    """Follow the jobs (``actions.follow``) and show one panel per job, blocking the cell with ``--wait`` or
    headless; the jobs end up on the kernel's loop.

    ``--no-poll`` shows nothing. ``owned``: the jobs were created here, so interrupting the blocked cell
    cancels them; otherwise the interrupt only stops watching and says how to cancel.
    """
    from synth_nb.notebook.show import show_jobs

    if not request.poll:
        move_to_kernel(jobs)
        return jobs
    if request.wait or not widgets:
        following = actions.follow(jobs, request, secrets=secrets)  # before any panel: every point is written
        try:  # every panel is shown before the cell blocks; --poll-timeout bounds the wait (JobTimeoutError)
            show_jobs(jobs, wait=True, timeout=request.poll_timeout, cancel_on_interrupt=owned)
        except KeyboardInterrupt:
            if owned:
                raise
            for job in jobs:
                print(f"interrupted: stopped watching job {job.id}; it keeps running. Cancel it with "
                      f"`await job.cancel()` or: synth-nb cancel {job.id}")
        finally:
            following.close()
            move_to_kernel(jobs)
        for job in jobs:
            if job.watchdog is not None and job.watchdog.stopped is not None:
                print(f"job {job.id}: {job.watchdog.report()}")
        return jobs
    move_to_kernel(jobs)
    show_live(jobs, request, secrets=secrets)
    return jobs


def show_live(jobs: Sequence[Job], request: Request, *, secrets: Sequence[str], panels: bool = True
              ) -> list[MonitorPanel]:
    """Follow jobs that live on the kernel's loop without blocking (``actions.follow``), then a panel each;
    nothing with ``--no-poll``.

    The magic's ``--yes`` path and the wizard's Submit both end here, so a flag means the same from either.
    ``panels=False``: the caller shows the jobs itself.
    """
    from synth_nb.notebook.show import show_jobs

    if not request.poll:
        return []
    actions.follow(jobs, request, secrets=secrets)
    return show_jobs(jobs, wait=False) if panels else []


def move_to_kernel(jobs: Sequence[Job]) -> None:
    """Give each job a fresh client for whichever loop follows it next; close the background-loop ones."""
    old: list[AsyncSynthClient] = []
    for job in jobs:
        old.append(job.client)
        job.rebind(job.client.clone())
    run_sync(_close(old))


async def _close(clients: Sequence[AsyncSynthClient]) -> None:
    for client in clients:
        await client.aclose()
