"""The actions a ``Request`` asks for, each the whole sequence, shared by the terminal, the magic and the wizard.

``prepare`` (what ``--dry-run`` shows; the only place, with ``rerun``, a ``Batch`` is made), ``check``
(``--check``'s pre-flight cards), ``send`` (the sequence of every submission: the keys shared with the
embedded backend, the task apps' pre-flight, then per plan its run recorded, the plan submitted and the
record kept in the job's folder), ``follow`` (``synth_nb.pipeline.follow``: what happens to sent or attached
jobs until they end), ``rerun``, ``fork``, ``attach`` (and ``cancel``) and ``jobs``; the ``compare`` action is
``synth_nb.comparison.compare_request`` (a comparison reads jobs through this package, so this package does
not import it). A door builds one ``Request``, runs the action ``request.action`` names and only renders what
comes back or asks its user a question (``Hooks``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from synth_nb.config import LoadedConfig, load_config
from synth_nb.errors import ConfigError, OverrideError, SynthNbError
from synth_nb.job import JobRegistry
from synth_nb.job.budget import Limits
from synth_nb.job.results import keep_bundle
from synth_nb.pipeline.attaching import Attachment, attachment, cancel
from synth_nb.pipeline.backend_keys import share_keys
from synth_nb.pipeline.bundle import bundle_folder, bundled_estimate, record_run, submitted_run
from synth_nb.pipeline.checked_estimates import estimate_for, keep_checked
from synth_nb.pipeline.clients import rebuild_job, say_connecting, secret_values, submit_plan
from synth_nb.pipeline.follow import Following, follow
from synth_nb.pipeline.fork import Fork, follow_bundled_app, fork_job
from synth_nb.pipeline.jobs import JobList, list_jobs
from synth_nb.pipeline.preflight import preflight
from synth_nb.pipeline.prepare import (
    Prepared,
    Say,
    SecretSources,
    build_overrides,
    check_applies,
    check_together,
    choose_configs,
    limit_rollouts,
    prepare_config,
    raise_problems,
    required_secrets,
)
from synth_nb.pipeline.request import Request
from synth_nb.pipeline.rerun import Rerun, parent_backend, parent_limits, plan_rerun
from synth_nb.pipeline.target import Target, api_key, resolve_target
from synth_nb.secrets import mask_text

if TYPE_CHECKING:
    from synth_nb.flows.overrides import Overrides
    from synth_nb.job import Job
    from synth_nb.pipeline.bundle import RunRecord
    from synth_nb.pipeline.card import PreflightCard
    from synth_nb.plan import Plan

__all__ = ["Attachment", "Batch", "Checked", "Following", "Hooks", "Rerunning", "attach", "attachment", "cancel",
           "check", "check_batch", "follow", "fork", "jobs", "prepare", "rerun", "send"]


def _quiet(_: str) -> None:
    return None


@dataclass(frozen=True)
class Hooks:
    """What only a door can do: ask which configs (none named, several found) and which ``.env`` file, and say
    what is worth knowing on the way (the embedded backend found, a bundled task app standing in)."""

    #: ``(folder, several)`` -> the configs to use when the request names none
    pick_configs: Callable[[Path, bool], list[Path]] | None = None
    #: ``(config paths, keys their flows need)`` -> the ``.env`` files to read, when the request names none
    pick_env_files: Callable[[list[Path], list[str]], tuple[Path, ...]] | None = None
    #: where notes go (a library caller's stdout by default; the terminal's stderr)
    say: Say = print


@dataclass
class Batch:
    """Configs prepared against one target with one set of overrides: what a submission sends."""

    target: Target
    overrides: Overrides | None
    prepared: list[Prepared]
    #: the job a re-run repeats / a fork started from (kept in each job's bundle)
    parent: str | None = None
    forked_from: str | None = None
    #: False for plans built elsewhere (no config behind them): their jobs keep no bundle
    keep_bundles: bool = True
    api_key: str | None = None

    @classmethod
    def of_plans(cls, plans: Sequence[Plan], target: Target, key: str) -> Batch:
        """Plans built elsewhere, sent with ``key``."""
        prepared = [Prepared(path=Path(p.config_path or p.flow), plan=p) for p in plans]
        return cls(target, None, prepared, keep_bundles=False, api_key=key)

    @property
    def failed(self) -> list[Prepared]:
        return [p for p in self.prepared if not p.ok]

    @property
    def plans(self) -> list[Plan]:
        return [p.plan for p in self.prepared if p.plan is not None]

    @cached_property
    def key(self) -> str:
        """The API key sent (once per batch; the embedded backend's own key wins for it)."""
        return self.api_key or api_key(self.target, [p.secrets for p in self.prepared])

    def secrets(self) -> list[str]:
        """Every value to mask in what this batch's jobs print (the API key, each plan's secrets)."""
        return secret_values(self.key, self.plans)

    def raise_problems(self) -> None:
        """Raise the one problem, or a ``ConfigError`` listing every config's problem."""
        raise_problems(self.prepared)


def _configs(request: Request, hooks: Hooks, several: bool) -> list[Path]:
    if request.configs:
        return list(request.configs)
    if hooks.pick_configs is not None:
        return hooks.pick_configs(request.folder, several)
    return [c.path for c in choose_configs(request.folder, several=several)]


def _sources(request: Request, hooks: Hooks, configs: list[tuple[Path, LoadedConfig | None]], target: Target
             ) -> SecretSources:
    """The request's secret sources; with no ``.env`` named, the one the door picks for the keys the configs'
    flows need (a config that does not load needs none, and fails on its own later)."""
    sources = request.sources()
    if not request.env_files and hooks.pick_env_files is not None:
        needed = [key for _, config in configs if config is not None for key in required_secrets(config.flow, target)]
        picked = hooks.pick_env_files([path for path, _ in configs], list(dict.fromkeys(needed)))
        if picked:
            sources = dataclasses.replace(sources, env_files=picked)
    return sources


def _loaded(path: Path) -> LoadedConfig | None:
    try:
        return load_config(path)
    except ConfigError:
        return None


@overload
def prepare(request: Request, hooks: Hooks = ..., *, start_local: bool = ..., several: bool = ...,
            errors: Literal["raise"] = ...) -> Batch: ...
@overload
def prepare(request: Request, hooks: Hooks = ..., *, start_local: bool = ..., several: bool = ...,
            errors: Literal["by_field"]) -> tuple[Batch | None, dict[str, str]]: ...
def prepare(request: Request, hooks: Hooks = Hooks(), *, start_local: bool = True, several: bool = False,
            errors: Literal["raise", "by_field"] = "raise") -> Batch | tuple[Batch | None, dict[str, str]]:
    """The request's configs as plans (``--dry-run`` shows them; ``send`` submits them).

    Bad override flags fail before configs are looked for. ``start_local``: start (or find) the embedded
    backend for ``--backend local`` now, so plans carry its URL. ``several``: with no config named, take every
    valid one found (a preview) rather than exactly one. ``errors="by_field"`` (the wizard's form): nothing is
    raised for the target or the overrides; each such problem is returned as the error of its field, with
    the batch (None when there is no target).
    """
    problems: dict[str, str] = {}
    try:
        target = resolve_target(request.backend, start_local=start_local, environ=request.environ, say=hooks.say)
    except SynthNbError as exc:  # a value that is not a URL, or the embedded backend cannot start here
        if errors == "raise":
            raise
        return None, {"backend": str(exc)}
    try:
        overrides = build_overrides(request.overrides, target)
    except OverrideError as exc:
        if errors == "raise":
            raise
        return Batch(target, None, []), {exc.field or "backend": str(exc)}
    paths = _configs(request, hooks, several)
    picking = hooks.pick_env_files is not None and not request.env_files
    configs = [(p, _loaded(p) if picking else None) for p in paths]  # loaded once: for the .env picker, then here
    sources = _sources(request, hooks, configs, target)
    prepared = [prepare_config(p, overrides=overrides, target=target, sources=sources, say=hooks.say, config=config)
                for p, config in configs]
    limit_rollouts(prepared, request.limits.max_rollouts, followed=request.poll)
    batch = Batch(target, overrides, prepared, forked_from=request.fork)
    try:
        check_together(overrides, prepared)
        check_applies(request.overrides, prepared)
    except OverrideError as exc:
        if errors == "raise":
            raise
        problems[exc.field or "idempotency"] = str(exc)
    return batch if errors == "raise" else (batch, problems)


def _check_writable(folder: Path, batch: Batch) -> None:
    """Before anything is sent: the project folder must take the job registry and each job's folder, or a job
    would be created and then lost (its id never said). One ``ConfigError``, nothing sent. Nothing is left
    behind: a folder not made yet is tried in the nearest one that exists (a job that is never created leaves
    no empty results folder)."""
    places = [folder / ".synth_nb", *(bundle_folder(item, folder) for item in batch.prepared if batch.keep_bundles)]
    for place in dict.fromkeys(places):
        try:
            existing = next(p for p in (place, *place.parents) if p.exists())
            with tempfile.TemporaryFile(dir=existing):
                pass
        except OSError as exc:
            raise ConfigError(f"cannot write to {place} ({exc.strerror or exc}): the job registry and each job's "
                              "results are kept there, so nothing was sent",
                              hint="make the folder writable, or run from a writable copy of the project") from None


async def send(batch: Batch, request: Request, *, say: Callable[[str], None] = _quiet, jobs: list[Job] | None = None,
               on_job: Callable[[Job, Prepared, RunRecord | None], None] | None = None,
               on_failure: Callable[[Prepared, SynthNbError], None] | None = None) -> list[Job]:
    """Submit every plan of ``batch`` (made by ``prepare`` or ``rerun``), in order, on the running loop; one
    client per job. Following the jobs is ``follow``'s.

    The project folder is checked writable first. The embedded backend is given the resolved task-app keys,
    the task apps are checked (``say`` gets each line), then per plan: its run is recorded, it is submitted
    and its record kept in its folder, so its bundle is written when it ends, whoever follows it. ``jobs``
    collects the jobs as they are created (a caller interrupted half way knows which to cancel). With
    ``on_failure``, a failed submission among several is reported there and the rest go on; otherwise it
    raises.
    """
    folder, created = request.folder, [] if jobs is None else jobs
    await asyncio.to_thread(_check_writable, folder, batch)
    target, key = batch.target, batch.key
    await asyncio.to_thread(share_keys, target, [p.secrets for p in batch.prepared])
    for line in await asyncio.to_thread(preflight, batch.prepared, target):
        say(line.line())
    say_connecting(target, say)
    registry = JobRegistry(folder)
    for item in batch.prepared:
        assert item.plan is not None  # ``prepare`` made it; the door raised its problems before sending
        estimate = await asyncio.to_thread(estimate_for, folder, item.plan, target)
        record = await asyncio.to_thread(record_run, item, base=folder, secrets=[key], embedded=target.is_embedded,
                                         parent=batch.parent, forked_from=batch.forked_from,
                                         limits=request.limits.given(), estimate=estimate) \
            if batch.keep_bundles else None
        try:
            job = await submit_plan(item.plan, target, key, registry=registry, poll_interval=request.poll_interval)
        except SynthNbError as exc:
            if on_failure is None or len(batch.prepared) == 1:
                raise
            on_failure(item, exc)
            continue
        created.append(job)  # at once: an interrupt from here on finds it to cancel
        job.estimate = estimate
        if record is not None:
            await asyncio.to_thread(record.save, job.id)
            keep_bundle(job, record)
        if on_job is not None:
            on_job(job, item, record)
    return created


@dataclass
class Checked:
    """``--check``: one pre-flight card per config, every secret they could echo, and what to say first."""

    cards: list[PreflightCard]
    hidden: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(card.ok for card in self.cards)


def check(request: Request, hooks: Hooks = Hooks()) -> Checked:
    """The pre-flight card of what the request would send (a ``--rerun``: the re-run's plan); sends no job.

    The dry rollout needs a running backend, so ``local`` starts (or finds) the embedded one.
    """
    if request.rerun:
        rerunning = rerun(request, say=hooks.say)
        checked = check_batch(rerunning.batch, request.folder)
        checked.notes = rerunning.rerun.lines()
        return checked
    return check_batch(prepare(request, hooks, several=True), request.folder)


def check_batch(batch: Batch, folder: Path | None = None) -> Checked:
    """The cards of prepared configs (the wizard's Preview checks what it shows); sends no job. With ``folder``,
    each card's estimate is kept there for the job later sent with the same plan (``checked_estimates``)."""
    from synth_nb.pipeline.card import check_configs  # measured: 10 ms, the card loads only for --check

    cards, hidden = check_configs(batch.prepared, batch.target)
    if folder is not None:
        keep_checked(folder, batch.prepared, cards, batch.target)
    return Checked(cards, hidden)


@dataclass
class Rerunning:
    """A ``--rerun``: the diff against the parent job, the batch that repeats it, and the request to follow it
    with (the parent's budget limits when none were given)."""

    rerun: Rerun
    batch: Batch
    request: Request

    @property
    def sendable(self) -> bool:
        """The plan is the parent's: nothing differs."""
        return self.rerun.same

    def lines(self) -> list[str]:
        """The diff, masked (a config's secrets may appear in it)."""
        return mask_text("\n".join(self.rerun.lines()), tuple(self.batch.secrets())).splitlines()


def rerun(request: Request, *, say: Say = print) -> Rerunning:
    """``--rerun JOB_ID``: the job's plan rebuilt from its bundle, against ``--backend`` or where the job ran.

    ``--task-url`` is the one override taken (where the task app listens now, like ``--backend``). The caller
    sends ``batch`` only when ``sendable`` and not a dry run; a difference sends nothing.
    """
    job_id = request.rerun or ""
    given = [f"--{name.replace('_', '-')}" for name in request.overrides if name != "task_url"]
    if request.configs or given:
        raise ConfigError(f"--rerun repeats the job's own config and overrides; drop {', '.join(given or ['--config'])}"
                          " (or submit a new job without --rerun)")
    target = resolve_target(request.backend or parent_backend(job_id, request.folder), say=say)
    if not request.limits.any:  # the job's own limits, as it was sent with them (the backend is given some)
        request = dataclasses.replace(request, limits=Limits.from_values(parent_limits(job_id, request.folder)))
    task_url = request.overrides.get("task_url")  # where the task app listens now: given, it beats the job's
    planned = plan_rerun(job_id, request.folder, target, request.sources(),
                         task_url=None if task_url is None else str(task_url),
                         rollout_limit=request.limits.max_rollouts, say=say)
    return Rerunning(planned, Batch(target, planned.prepared.overrides, [planned.prepared], parent=job_id), request)


def fork(request: Request, *, copy: bool, say: Say = print) -> Fork:
    """``--fork JOB_ID``: the job's config, overrides and backend from its bundle; flags given beat the parent's.

    ``copy``: always write the config to a new file (the terminal, where the user edits it). Sends nothing.
    """
    if request.configs:
        raise ConfigError("--fork starts from the job's own config; drop --config (or submit it without --fork)")
    forked = fork_job(request.fork or "", request.folder, out=request.fork_out, copy=copy)
    forked.backend = request.backend or forked.backend
    if "task_url" not in request.overrides:  # a flag given now beats the parent's
        follow_bundled_app(forked, say)
    forked.overrides.update(request.overrides)
    return forked


async def attach(found: Attachment, request: Request, *, say: Say = _quiet) -> Job:
    """The job's history rebuilt from its backend within ``--poll-timeout`` (followed by ``follow``); a job
    submitted from this folder that has not ended yet keeps its record, so its bundle is written when it ends,
    here or elsewhere."""
    say_connecting(found.target, say)
    job = await rebuild_job(found.job_id, found.target, found.key, flow=found.flow, registry=found.registry,
                            poll_interval=request.poll_interval, hidden=found.hidden, timeout=request.poll_timeout)
    if job.results_folder is not None:
        record = await asyncio.to_thread(submitted_run, job.results_folder / job.id)
        if record is not None:
            job.estimate = record.estimate
            keep_bundle(job, record)
        else:  # its bundle is written already: the estimate it was sent with is in it
            job.estimate = await asyncio.to_thread(bundled_estimate, job.results_folder / job.id)
    return job


async def jobs(request: Request) -> JobList:
    """``--jobs`` / ``synth-nb jobs``: the folder's jobs (``.synth_nb/jobs.json``), each as its backend says it
    is now (``synth_nb.pipeline.jobs``)."""
    return await list_jobs(JobRegistry(request.folder))
