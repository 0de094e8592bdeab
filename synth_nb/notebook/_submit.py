"""Submit, attach and list jobs for the magic and the wizard, and hand them to the monitor panel.

Where a job lives matters because ``Job`` uses asyncio primitives bound to one loop:

* the wizard submits from a task on the kernel's loop, so its jobs live there;
* a magic cannot await, so it submits on the process's background loop (``_loop.run_sync``). With
  ``--wait`` (or headless) the job stays there and the panel blocks the cell on that loop; otherwise
  the magic returns a fresh ``Job`` for the same id bound to the kernel's loop, so ``await job.wait()``
  and the live panel work in later cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from synth_nb.errors import ConfigError, SynthNbError
from synth_nb.notebook import _session
from synth_nb.notebook._loop import background_loop, run_sync

__all__ = ["attach_job", "list_jobs", "submit_and_show", "submit_prepared_async", "valid_configs"]


def valid_configs(folder: Path, *, exactly_one: bool) -> list[Path]:
    """Configs to use when no ``--config`` is given and there is no wizard.

    Previewing takes every valid config in the folder; submitting needs exactly one.
    """
    from synth_nb.notebook._wizard_state import discover

    rows = discover(folder)
    valid = [r for r in rows if r["valid"]]
    if valid and (len(valid) == 1 or not exactly_one):
        return [folder / r["path"] for r in valid]
    listing = ", ".join(r["path"] for r in rows) or "none"
    raise ConfigError(
        f"found {len(valid)} valid training configs in {folder} ({listing}); pick one with --config PATH"
        if valid else f"no valid training config in {folder} (found: {listing}); pass --config PATH",
    )


def _client(base_url: str, api_key: str) -> Any:
    from synth_nb.client import AsyncSynthClient

    return AsyncSynthClient(base_url, api_key)


async def submit_prepared_async(prepared: Sequence[_session.Prepared], *, folder: Path,
                                poll_interval: float = 5.0) -> list[Any]:
    """Submit each prepared plan on the running loop; one client per job (it follows the job)."""
    from synth_nb.job import JobRegistry, submit

    registry = JobRegistry(folder)
    jobs = []
    for item in prepared:
        if not item.ok:
            raise item.error or ConfigError(f"{item.path}: not ready to submit")
        client = _client(item.plan.backend_url, _session.api_key_for(item))
        jobs.append(await submit(item.plan, client, registry=registry, poll_interval=poll_interval))
    return jobs


def _bind_to_kernel_loop(job: Any) -> Any:
    """A ``Job`` for the same id whose monitoring will run on the caller's (kernel's) loop."""
    from synth_nb.job import Job

    client = _client(job.client.base_url, (job.client.secrets or [""])[0])
    fresh = Job(job.id, job.flow, client, algorithm=job.algorithm, backend_url=job.backend_url,
                registry=job.registry, poll_interval=job.poll_interval)
    if job.status_doc:
        fresh.ingest_status(job.status_doc)
    for event in job.events:  # history already fetched (``--attach``) is not fetched twice
        fresh.ingest_event(event)
    for point in job.metrics:
        fresh.ingest_metric(point)
    return fresh


async def _close_clients(jobs: Sequence[Any]) -> None:
    for job in jobs:
        await job.client.aclose()


def _record(jobs: Sequence[Any], path: Path | None) -> None:
    """``--record PATH``: one JSONL recording per job (``PATH`` itself when there is one job)."""
    if path is None:
        return
    from synth_nb.job import Recorder

    for job in jobs:
        target = path if len(jobs) == 1 else path.with_name(f"{path.stem}-{job.id}{path.suffix}")
        Recorder(target, secrets=job.client.secrets).follow(job)


def _hand_over(jobs: list[Any], request: _session.TrainRequest, *, widgets: bool) -> list[Any]:
    """Show one panel per job; block on the background loop when waiting, else rebind to the kernel."""
    from synth_nb.notebook.panel import show_jobs

    blocking = request.wait or not widgets
    if not request.poll:
        run_sync(_close_clients(jobs))
        return jobs
    if blocking:
        _record(jobs, request.record)
        for job in jobs:
            job.loop = background_loop()  # the panel runs where the job lives
        # every panel is shown before the cell blocks; --poll-timeout bounds the wait (JobTimeoutError)
        show_jobs(jobs, wait=True, timeout=request.poll_timeout)
        return jobs
    bound = [_bind_to_kernel_loop(job) for job in jobs]
    run_sync(_close_clients(jobs))
    _record(bound, request.record)
    show_jobs(bound, wait=False)
    return bound


def submit_and_show(prepared: Sequence[_session.Prepared], request: _session.TrainRequest, *,
                    widgets: bool) -> list[Any]:
    """The magic's ``--yes`` path: submit every plan, then hand the jobs to the monitor panel."""
    jobs = run_sync(submit_prepared_async(prepared, folder=request.folder, poll_interval=request.poll_interval))
    for job in jobs:
        print(f"submitted {job.flow} job {job.id}")
    return _hand_over(jobs, request, widgets=widgets)


def _api_key_for_backend(request: _session.TrainRequest, backend: tuple[str, str | None], flow: str) -> str:
    if backend[1]:
        return backend[1]
    from synth_nb.secrets import resolve_secrets

    bundle = resolve_secrets(flow, env_files=tuple(request.env_files), modal_secrets=tuple(request.modal_secrets),
                             cwd=request.folder)
    return _session.secret_value(bundle.get(_session.API_KEY)) or ""


def attach_job(request: _session.TrainRequest, *, widgets: bool) -> Any:
    """``--attach JOB_ID``: rebuild the job's history from the backend and show its panel."""
    from synth_nb.job import JobRegistry, attach

    assert request.attach is not None
    registry = JobRegistry(request.folder)
    record = registry.get(request.attach)
    backend_arg = request.backend or (record.backend_url if record else None)
    backend = _session.backend_url(backend_arg)
    api_key = _api_key_for_backend(request, backend, record.flow if record else "prompt_learning")

    async def rebuild() -> Any:
        client = _client(backend[0], api_key)
        try:
            return await attach(request.attach or "", client, registry=registry)
        except SynthNbError:
            await client.aclose()
            raise

    job = run_sync(rebuild())
    return _hand_over([job], request, widgets=widgets)[0]


def list_jobs(request: _session.TrainRequest, *, widgets: bool) -> list[Any]:
    """``--jobs``: the jobs submitted from this folder, newest first (re-attach with ``--attach``)."""
    from synth_nb.job import JobRegistry

    records = list(reversed(JobRegistry(request.folder).list()))
    from IPython.display import display

    display(_jobs_bundle(records), raw=True)
    return records


def _jobs_bundle(records: Sequence[Any]) -> dict[str, str]:
    import html

    if not records:
        text = "No jobs submitted from this folder yet."
        return {"text/plain": text, "text/html": f"<p>{text}</p>"}
    head = ("job id", "flow", "status", "submitted", "config")
    rows = [(r.job_id, r.flow + (f"/{r.algorithm}" if r.algorithm else ""), r.status or "?", r.submitted_at,
             Path(r.config_path).name if r.config_path else "") for r in records]
    text = "\n".join("  ".join(str(c) for c in row) for row in [head, *rows])
    text += "\nRe-attach with: %synth_train --attach JOB_ID"
    cells = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    header = "".join(f"<th scope='col'>{h}</th>" for h in head)
    markup = (f"<table class='synth-jobs'><caption>Jobs submitted from this folder</caption><thead><tr>{header}"
              f"</tr></thead><tbody>{cells}</tbody></table><p>Re-attach with <code>%synth_train --attach "
              f"JOB_ID</code>.</p>")
    return {"text/plain": text, "text/html": markup}
