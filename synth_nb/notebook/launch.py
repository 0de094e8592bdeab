"""Turn a ``%synth_train`` request into prepared configs and jobs, and hand the jobs to the notebook.

Where a job lives matters because its client works on one event loop:

* the wizard submits from a task on the kernel's loop, so its jobs live there from the start;
* a magic cannot await, so it submits (or re-attaches) on the process's background loop
  (``kernel_loop.run_sync``). With ``--wait`` (or headless) the panel blocks the cell on that loop.
  Then, and at once in every other case, each job moves to a fresh copy of its client
  (``job.rebind(job.client.clone())``), so later cells can ``await job.wait()``, ``job.cancel()`` and
  ``job.refresh()`` on the kernel's loop and read ``job.metrics_df()``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from synth_nb import pipeline, report
from synth_nb.errors import ConfigError
from synth_nb.notebook.kernel_loop import run_sync
from synth_nb.notebook.preview_text import warning_lines
from synth_nb.notebook.request import TrainRequest
from synth_nb.pipeline import Prepared, Target

if TYPE_CHECKING:
    from synth_nb.client import AsyncSynthClient
    from synth_nb.flows.overrides import Overrides
    from synth_nb.job import Job
    from synth_nb.pipeline.card import PreflightCard
    from synth_nb.pipeline.fork import Fork

__all__ = ["Preparation", "attach_job", "fork_of", "prepare_request", "rerun_job", "show_cards", "submit_and_show", "submit_prepared"]


@dataclass
class Preparation:
    """A request's configs, prepared against one target with one set of overrides."""

    target: Target
    overrides: Overrides
    prepared: list[Prepared]

    @property
    def failed(self) -> list[Prepared]:
        return [p for p in self.prepared if not p.ok]


def prepare_request(request: TrainRequest, *, several: bool) -> Preparation:
    """Discover (unless ``--config`` names them), resolve the target, prepare every config.

    ``several``: without ``--config``, take every valid config (previews) rather than exactly one.
    """
    paths = request.configs or [c.path for c in pipeline.choose_configs(request.folder, several=several)]
    target = pipeline.resolve_target(request.backend)
    overrides = pipeline.build_overrides(request.overrides, target)
    sources = request.sources()
    prepared = [pipeline.prepare(p, overrides=overrides, target=target, sources=sources) for p in paths]
    pipeline.check_together(overrides, prepared)
    return Preparation(target, overrides, prepared)


async def submit_prepared(prepared: Sequence[Prepared], target: Target, *, folder: Path,
                          poll_interval: float = 5.0, parent: str | None = None,
                          forked_from: str | None = None) -> list[Job]:
    """Submit each prepared plan on the running loop; one client per job (it follows the job).

    Each job writes its bundle when it ends (``parent``: the job a ``--rerun`` repeats; ``forked_from``: the
    job a ``--fork`` started from).
    """
    from synth_nb.job import JobRegistry

    for item in prepared:
        if not item.ok:
            raise item.error or ConfigError(f"{item.path}: not ready to submit")
    key = pipeline.api_key(target, [p.secrets for p in prepared])
    await asyncio.to_thread(pipeline.share_keys, target, [p.secrets for p in prepared])
    for check in await asyncio.to_thread(pipeline.preflight, prepared, target):
        print(check.line())
    registry = JobRegistry(folder)
    jobs = []
    for item in prepared:
        if item.plan is None:
            continue
        record = await asyncio.to_thread(pipeline.record_run, item, base=folder, secrets=[key],
                                         embedded=target.is_embedded, parent=parent, forked_from=forked_from)
        job = await pipeline.submit(item.plan, target, key, registry=registry, poll_interval=poll_interval)
        pipeline.keep_bundle(job, record)  # written when the job ends, whoever follows it
        jobs.append(job)
    return jobs


def submit_and_show(preparation: Preparation, request: TrainRequest, *, widgets: bool) -> list[Job]:
    """The magic's ``--yes`` path: submit every plan, then hand the jobs to the monitor panel."""
    target, prepared = preparation.target, preparation.prepared
    for line in warning_lines(prepared):  # a typo'd key must not train silently
        print(line)
    jobs = run_sync(submit_prepared(prepared, target, folder=request.folder, poll_interval=request.poll_interval))
    for job in jobs:
        print(f"submitted {job.flow} job {job.id}")
    key = pipeline.api_key(target, [p.secrets for p in prepared])
    secrets = pipeline.secret_values(key, [p.plan for p in prepared if p.plan is not None])
    return hand_over(jobs, request, secrets=secrets, widgets=widgets)


def show_cards(request: TrainRequest) -> list[PreflightCard]:
    """``--check``: display each config's pre-flight card (static HTML, kept in the saved notebook).

    Nothing is submitted; the cards are returned, so ``cards[0].ok`` can gate a later cell.
    """
    from IPython.display import display

    from synth_nb.pipeline.card import check_configs

    preparation = prepare_request(request, several=True)
    cards, _ = check_configs(preparation.prepared, preparation.target)
    for card in cards:
        display(card)
    return cards


def rerun_job(request: TrainRequest, *, widgets: bool) -> Job:
    """``--rerun JOB_ID``: the job's plan again from its bundle, once the diff against it shows empty.

    A difference (config, dataset or plan) is printed and raised as a ``ConfigError``; nothing is sent.
    """
    from synth_nb.pipeline.rerun import parent_backend, plan_rerun
    from synth_nb.secrets import mask_text

    job_id = request.rerun or ""
    if request.configs or request.overrides:
        raise ConfigError("--rerun repeats the job's own config and overrides; drop --config and the override "
                          "flags (or submit a new job without --rerun)")
    target = pipeline.resolve_target(request.backend or parent_backend(job_id, request.folder))
    rerun = plan_rerun(job_id, request.folder, target, request.sources())
    key = pipeline.api_key(target, [rerun.prepared.secrets])
    secrets = pipeline.secret_values(key, [rerun.prepared.plan] if rerun.prepared.plan else [])
    print(mask_text("\n".join(rerun.lines()), tuple(secrets)))
    if not rerun.same:
        raise ConfigError(f"job {job_id} was not re-run: the config, a dataset or the plan differs (shown above)")
    jobs = run_sync(submit_prepared([rerun.prepared], target, folder=request.folder,
                                    poll_interval=request.poll_interval, parent=job_id))
    print(f"submitted {jobs[0].flow} job {jobs[0].id} (re-run of {job_id})")
    return hand_over(jobs, request, secrets=secrets, widgets=widgets)[0]


def fork_of(request: TrainRequest) -> Fork:
    """``--fork JOB_ID``: the job's config, overrides and backend from its bundle; flags given beat the parent's.

    The magic opens the wizard on it (its Preview diffed against the job), or headless prints where the
    config is and the line that submits it.
    """
    from synth_nb.pipeline.fork import fork_job

    if request.configs:
        raise ConfigError("--fork starts from the job's own config; drop --config (or open it without --fork)")
    fork = fork_job(request.fork or "", request.folder, out=request.fork_out)
    fork.overrides.update(request.overrides)
    fork.backend = request.backend or fork.backend
    return fork


def attach_job(request: TrainRequest, *, widgets: bool) -> Job:
    """``--attach JOB_ID``: rebuild the job's history from its backend and show its panel."""
    from synth_nb.job import JobRegistry

    job_id = request.attach or ""
    registry = JobRegistry(request.folder)
    target = pipeline.attach_target(job_id, request.backend, registry)
    sources = request.sources()
    key = sources.api_key(target)
    hidden = [key, *(s.get_secret_value() for s in sources.resolve(target).values())]
    job = run_sync(pipeline.attach(job_id, target, key, registry=registry, poll_interval=request.poll_interval,
                                   hidden=hidden))
    return hand_over([job], request, secrets=hidden, widgets=widgets)[0]


def hand_over(jobs: list[Job], request: TrainRequest, *, secrets: Sequence[str], widgets: bool) -> list[Job]:
    """Show one panel per job (blocking the cell with ``--wait`` or headless) and move the jobs to the kernel.

    ``--no-poll`` shows nothing. ``--record`` starts one recording per job before the panels follow it, and
    ``--max-minutes`` & co. a budget watchdog (``job.watchdog``) that cancels a job crossing a limit.
    """
    from synth_nb.job.watchdog import Limits, watch
    from synth_nb.notebook.show import show_jobs

    if not request.poll:
        move_to_kernel(jobs)
        return jobs
    limits = Limits.from_values(request.limits)
    for job in jobs:
        watch(job, limits)
    report.start(jobs, request.report)  # before any panel follows: every point streamed is written
    if request.wait or not widgets:
        pipeline.start_recording(jobs, request.record, secrets)
        try:  # every panel is shown before the cell blocks; --poll-timeout bounds the wait (JobTimeoutError)
            show_jobs(jobs, wait=True, timeout=request.poll_timeout)
        finally:
            move_to_kernel(jobs)
        for job in jobs:
            if job.watchdog is not None and job.watchdog.tripped is not None:
                print(f"job {job.id}: {job.watchdog.report()}")
        return jobs
    move_to_kernel(jobs)
    pipeline.start_recording(jobs, request.record, secrets)
    show_jobs(jobs, wait=False)
    return jobs


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
