"""The actions a ``Request`` asks for, each the whole sequence, shared by the terminal, the magic and the wizard.

``prepare`` (what ``--dry-run`` shows), ``check`` (``--check``'s pre-flight cards), ``send`` (the sequence
of every submission: the target resolved once, the overrides built once, the API key once, then the keys
shared with the embedded backend, the task apps' pre-flight, the run recorded, the plan submitted, the
bundle kept and the budget watchdog set), ``rerun``, ``fork``, ``attach`` (and ``cancel``) and ``jobs``;
the ``compare`` action is ``synth_nb.comparison.compare_request`` (a comparison reads jobs through this
package, so this package does not import it). A door builds one ``Request``, runs the action
``request.action`` names and only renders what comes back or asks its user a question (``Hooks``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth_nb.errors import ConfigError, OverrideError, SynthNbError
from synth_nb.pipeline.backend_keys import share_keys
from synth_nb.pipeline.bundle import keep_bundle, record_run
from synth_nb.pipeline.launch import attach as attach_on
from synth_nb.pipeline.launch import attach_target, say_connecting, secret_values
from synth_nb.pipeline.launch import submit as submit_on
from synth_nb.pipeline.preflight import preflight
from synth_nb.pipeline.prepare import (
    Prepared,
    SecretSources,
    build_overrides,
    check_together,
    choose_configs,
    limit_rollouts,
    raise_problems,
)
from synth_nb.pipeline.prepare import (
    prepare as prepare_one,
)
from synth_nb.pipeline.request import Request
from synth_nb.pipeline.target import Target, api_key, resolve_target

if TYPE_CHECKING:
    from synth_nb.flows.overrides import Overrides
    from synth_nb.job import Job, JobRegistry
    from synth_nb.job.watchdog import Limits
    from synth_nb.pipeline.bundle import RunRecord
    from synth_nb.pipeline.card import PreflightCard
    from synth_nb.pipeline.fork import Fork
    from synth_nb.pipeline.rerun import Rerun
    from synth_nb.plan import Plan

__all__ = ["Attachment", "Batch", "Checked", "Hooks", "Rerunning", "attach", "attachment", "cancel", "check",
           "check_batch", "fork", "jobs", "prepare", "rerun", "send", "wizard_batch"]


def _quiet(_: str) -> None:
    return None


def _limits(limits: Limits | Mapping[str, Any] | None) -> Limits | None:
    """The budget watchdog's limits (None: no watchdog); flag values are checked here."""
    from synth_nb.job.watchdog import Limits

    if limits is None or isinstance(limits, Limits):
        return limits
    return Limits.from_values(limits)


@dataclass(frozen=True)
class Hooks:
    """What only a door can do: ask which configs (none named, several found) and which ``.env`` file."""

    #: ``(folder, several)`` -> the configs to use when the request names none
    pick_configs: Callable[[Path, bool], list[Path]] | None = None
    #: ``(config paths, target)`` -> the ``.env`` files to read, when the request names none
    pick_env_files: Callable[[list[Path], Target], tuple[Path, ...]] | None = None


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


def _sources(request: Request, hooks: Hooks, paths: list[Path], target: Target) -> SecretSources:
    sources = request.sources()
    if not request.env_files and hooks.pick_env_files is not None:
        picked = hooks.pick_env_files(paths, target)
        if picked:
            sources = SecretSources(env_files=picked, modal_secrets=sources.modal_secrets, environ=sources.environ,
                                    cwd=sources.cwd)
    return sources


def prepare(request: Request, hooks: Hooks = Hooks(), *, start_local: bool = True, several: bool = False) -> Batch:
    """The request's configs as plans (``--dry-run`` shows them; ``send`` submits them).

    Bad override flags fail before configs are looked for. ``start_local``: start (or find) the embedded
    backend for ``--backend local`` now, so plans carry its URL. ``several``: with no config named, take every
    valid one found (a preview) rather than exactly one.
    """
    target = resolve_target(request.backend, start_local=start_local)
    overrides = build_overrides(request.overrides, target)
    paths = _configs(request, hooks, several)
    sources = _sources(request, hooks, paths, target)
    prepared = [prepare_one(p, overrides=overrides, target=target, sources=sources) for p in paths]
    limit_rollouts(prepared, _rollout_limit(request.limits))
    check_together(overrides, prepared)
    return Batch(target, overrides, prepared)


def wizard_batch(backend: str | None, environ: Mapping[str, str], values: Mapping[str, Any], paths: Sequence[Path],
                 sources: SecretSources) -> tuple[Batch | None, dict[str, str]]:
    """The wizard's form prepared as ``prepare`` would, with each problem as an error of its field."""
    try:
        target = resolve_target(backend, environ=environ)
    except SynthNbError as exc:  # a value that is not a URL, or the embedded backend cannot start here
        return None, {"backend": str(exc)}
    try:
        overrides = build_overrides(values, target)
    except OverrideError as exc:
        return Batch(target, None, []), {exc.field or "backend": str(exc)}
    batch = Batch(target, overrides, [prepare_one(p, overrides=overrides, target=target, sources=sources)
                                      for p in paths])
    try:
        check_together(overrides, batch.prepared)
    except OverrideError as exc:
        return batch, {exc.field or "idempotency": str(exc)}
    return batch, {}


def _given(limits: Limits | None) -> dict[str, float]:
    """The limits given, by flag dest (what a job's bundle keeps, so a re-run repeats them)."""
    return {} if limits is None else {k: v for k, v in dataclasses.asdict(limits).items() if v is not None}


def _rollout_limit(limits: Limits | Mapping[str, Any] | None) -> int | None:
    checked = _limits(limits)
    return None if checked is None or checked.max_rollouts is None else int(checked.max_rollouts)


async def send(batch: Batch, *, folder: Path, poll_interval: float = 5.0, limits: Limits | Mapping[str, Any] | None = None,
               say: Callable[[str], None] = _quiet, jobs: list[Job] | None = None,
               on_job: Callable[[Job, Prepared, RunRecord | None], None] | None = None,
               on_failure: Callable[[Prepared, SynthNbError], None] | None = None) -> list[Job]:
    """Submit every plan of ``batch``, in order, on the running loop; one client per job.

    The embedded backend is given the resolved task-app keys, the task apps are checked (``say`` gets each
    line), then per plan: its run is recorded, it is submitted, its job keeps its bundle (written when it ends)
    and gets a budget watchdog when ``limits`` are given. ``jobs`` collects the jobs as they are created (a
    caller interrupted half way knows which to cancel). With ``on_failure``, a failed submission among several
    is reported there and the rest go on; otherwise it raises.
    """
    from synth_nb.job import JobRegistry
    from synth_nb.job.watchdog import watch

    for item in batch.prepared:
        if not item.ok:
            raise item.error or ConfigError(f"{item.path}: not ready to submit")
    watchdog = _limits(limits)
    limit_rollouts(batch.prepared, _rollout_limit(watchdog))  # the wizard's and a fork's plans get it here
    raise_problems(batch.prepared)
    target, key, created = batch.target, batch.key, [] if jobs is None else jobs
    await asyncio.to_thread(share_keys, target, [p.secrets for p in batch.prepared])
    for line in await asyncio.to_thread(preflight, batch.prepared, target):
        say(line.line())
    say_connecting(target, say)
    registry = JobRegistry(folder)
    for item in batch.prepared:
        assert item.plan is not None
        record = await asyncio.to_thread(record_run, item, base=folder, secrets=[key], embedded=target.is_embedded,
                                         parent=batch.parent, forked_from=batch.forked_from,
                                         limits=_given(watchdog)) \
            if batch.keep_bundles else None
        try:
            job = await submit_on(item.plan, target, key, registry=registry, poll_interval=poll_interval)
        except SynthNbError as exc:
            if on_failure is None or len(batch.prepared) == 1:
                raise
            on_failure(item, exc)
            continue
        if record is not None:
            keep_bundle(job, record)
        if watchdog is not None:
            watch(job, watchdog)
        created.append(job)
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
        rerunning = rerun(request)
        checked = check_batch(rerunning.batch)
        checked.notes = rerunning.rerun.lines()
        return checked
    return check_batch(prepare(request, hooks, several=True))


def check_batch(batch: Batch) -> Checked:
    """The cards of prepared configs (the wizard's Preview checks what it shows); sends no job."""
    from synth_nb.pipeline.card import check_configs

    cards, hidden = check_configs(batch.prepared, batch.target)
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
        from synth_nb.secrets import mask_text

        return mask_text("\n".join(self.rerun.lines()), tuple(self.batch.secrets())).splitlines()


def rerun(request: Request) -> Rerunning:
    """``--rerun JOB_ID``: the job's plan rebuilt from its bundle, against ``--backend`` or where the job ran.

    ``--task-url`` is the one override taken (where the task app listens now, like ``--backend``). The caller
    sends ``batch`` only when ``sendable`` and not a dry run; a difference sends nothing.
    """
    from synth_nb.pipeline.rerun import parent_backend, parent_limits, plan_rerun

    job_id = request.rerun or ""
    given = [f"--{name.replace('_', '-')}" for name in request.overrides if name != "task_url"]
    if request.configs or given:
        raise ConfigError(f"--rerun repeats the job's own config and overrides; drop {', '.join(given or ['--config'])}"
                          " (or submit a new job without --rerun)")
    target = resolve_target(request.backend or parent_backend(job_id, request.folder))
    if not request.limits:  # the job's own limits, as it was sent with them (the backend is given some)
        request = dataclasses.replace(request, limits=parent_limits(job_id, request.folder))
    task_url = request.overrides.get("task_url")  # where the task app listens now: given, it beats the job's
    planned = plan_rerun(job_id, request.folder, target, request.sources(),
                         task_url=None if task_url is None else str(task_url),
                         rollout_limit=_rollout_limit(request.limits))
    return Rerunning(planned, Batch(target, planned.prepared.overrides, [planned.prepared], parent=job_id), request)


def fork(request: Request, *, copy: bool) -> Fork:
    """``--fork JOB_ID``: the job's config, overrides and backend from its bundle; flags given beat the parent's.

    ``copy``: always write the config to a new file (the terminal, where the user edits it). Sends nothing.
    """
    from synth_nb.pipeline.fork import follow_bundled_app, fork_job

    if request.configs:
        raise ConfigError("--fork starts from the job's own config; drop --config (or submit it without --fork)")
    forked = fork_job(request.fork or "", request.folder, out=request.fork_out, copy=copy)
    forked.backend = request.backend or forked.backend
    if "task_url" not in request.overrides:  # a flag given now beats the parent's
        follow_bundled_app(forked)
    forked.overrides.update(request.overrides)
    return forked


@dataclass
class Attachment:
    """Where a job lives and the keys to talk to it with."""

    job_id: str
    target: Target
    key: str
    #: every key resolved here, masked in what the job holds and prints
    hidden: list[str]
    flow: str | None
    registry: JobRegistry


def attachment(request: Request, job_id: str | None = None, *, start_local: bool = True) -> Attachment:
    """``--attach`` / ``attach`` / ``cancel``: ``--backend``, else the backend the registry says, else the default."""
    from synth_nb.job import JobRegistry

    job_id = job_id or request.attach or ""
    registry = JobRegistry(request.folder)
    target = attach_target(job_id, request.backend, registry, start_local=start_local)
    if not target.started:
        raise ConfigError("re-attaching needs the URL of a running backend, not 'local'", key="backend",
                          hint="start one with `synth-nb backend` and pass --backend URL")
    sources = request.sources()
    key = sources.api_key(target)
    hidden = [key, *(s.get_secret_value() for s in sources.resolve(target).values())]
    return Attachment(job_id, target, key, [h for h in hidden if h], request.flow, registry)


async def attach(found: Attachment, *, poll_interval: float = 5.0, limits: Limits | Mapping[str, Any] | None = None,
                 timeout: float | None = None, say: Callable[[str], None] = _quiet) -> Job:
    """The job's history rebuilt from its backend (not yet followed), with a budget watchdog when ``limits``;
    ``timeout``: the most the rebuild may take (``--poll-timeout``)."""
    from synth_nb.job.watchdog import watch

    say_connecting(found.target, say)
    job = await attach_on(found.job_id, found.target, found.key, flow=found.flow, registry=found.registry,
                          poll_interval=poll_interval, hidden=found.hidden, timeout=timeout)
    found_limits = _limits(limits)
    if found_limits is not None:
        watch(job, found_limits)
    return job


async def cancel(found: Attachment, *, timeout: float = 30.0) -> str:
    """Ask the backend to cancel the job and wait for it to say so: the job's status then."""
    job = await attach_on(found.job_id, found.target, found.key, flow=found.flow, registry=found.registry,
                          hidden=found.hidden)
    try:
        return await job.cancel(timeout=timeout)
    finally:
        await job.client.aclose()


def jobs(request: Request) -> JobRegistry:
    """``--jobs``: the folder's job registry (``.synth_nb/jobs.json``)."""
    from synth_nb.job import JobRegistry

    return JobRegistry(request.folder)
