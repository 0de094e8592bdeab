"""Execute a ``Plan`` (uploads, checks, create, start) and re-attach to existing jobs."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from synth_nb.contract import FlowEndpoints
from synth_nb.errors import (
    BackendAnswerError,
    BackendError,
    ClientError,
    ConfigError,
    JobTimeoutError,
    SynthNbError,
)
from synth_nb.job._find import find_job
from synth_nb.job._job import Job
from synth_nb.job.interrupt import cancel_after_interrupt, create_through_interrupt
from synth_nb.job.registry import JobRecord, JobRegistry, config_hash
from synth_nb.plan import Plan, Step, resolve_refs
from synth_nb.untrusted import job_id_problem, shown_id

if TYPE_CHECKING:
    from synth_nb.client import AsyncSynthClient

__all__ = ["attach", "submit"]

#: create calls can be slow (prompt learning validates against the task app synchronously)
CREATE_TIMEOUT = 180.0


def _fill_path(path: str, job_id: str | None) -> str:
    if "{job_id}" in path:
        if not job_id:
            raise ConfigError(f"plan step {path} needs a job id, but no earlier step created a job")
        return path.replace("{job_id}", job_id)
    return path


def _response_id(body: Any) -> str | None:
    if isinstance(body, dict):
        value = body.get("job_id") or body.get("id")
        return str(value) if value else None
    return None


async def _run_check(step: Step, client: AsyncSynthClient, body: Any) -> Any:
    what = step.description or f"{step.method} {step.path}"
    try:
        result = await client.request_json(step.method, step.path, json=body, headers=step.headers or None,
                                           timeout=60.0)
    except BackendError as exc:
        raise type(exc)(f"preflight check failed ({what}): {exc}", status_code=exc.status_code,
                        method=exc.method, url=exc.url, body=exc.body) from None
    if isinstance(result, dict) and result.get("any_ok") is False:
        raise ClientError(f"preflight check failed ({what}): {_check_problem(result)}")
    return result


def _check_problem(result: dict[str, Any]) -> str:
    """One plain sentence from a failed check: the backend's own ``detail``, else what its attempts show."""
    detail = result.get("detail")
    if isinstance(detail, str) and detail.strip():
        return detail.strip().rstrip(".") + "."
    statuses = sorted({str(a.get("health_status")) for a in result.get("attempts") or [] if isinstance(a, dict)})
    seen = f" (/health answered {', '.join(statuses)})" if statuses else ""
    return f"the backend could not reach the task app with any key it holds{seen}."


async def submit(plan: Plan, client: AsyncSynthClient, *, registry: JobRegistry | None = None,
                 poll_interval: float = 5.0) -> Job:
    """Run the plan's steps in order and return the created ``Job`` (not yet monitored).

    An interrupted submission (Ctrl-C, a cancelled task) cancels the job it created, even one whose create
    request was in flight, before passing the interrupt on (``synth_nb.job.interrupt``).
    """
    created: list[str] = []
    try:
        return await _run_plan(plan, client, registry, poll_interval, created)
    except asyncio.CancelledError:
        if created:
            status = await cancel_after_interrupt(client, plan.endpoints, created[-1])
            if registry is not None and job_id_problem(created[-1]) is None:
                with contextlib.suppress(OSError, SynthNbError):
                    _register(registry, plan, client, created[-1])
                    registry.update(created[-1], status=status)
        raise


async def _run_plan(plan: Plan, client: AsyncSynthClient, registry: JobRegistry | None, poll_interval: float,
                    created: list[str]) -> Job:
    refs: dict[str, str] = {}
    job_id: str | None = None
    create = plan.create_step
    idempotency_key = plan.idempotency_key or uuid.uuid4().hex
    for step in plan.steps:
        path = _fill_path(step.path, job_id)
        if step.kind == "upload":
            if step.upload is None:
                raise ConfigError(f"upload step {step.path} has no file")
            form = dict(step.body or {})
            purpose = str(form.pop("purpose", "fine-tune"))
            limit = form.pop("limit_lines", None)
            uploaded = await client.upload_file(step.upload, purpose=purpose,
                                                limit_lines=int(limit) if limit is not None else None,
                                                endpoint=path, fields=form)
            if step.ref:
                refs[step.ref] = str(uploaded["id"])
            continue
        body = resolve_refs(step.body, refs)
        if step.kind == "check":
            await _run_check(Step(step.method, path, body, step.kind, step.description, None, step.headers),
                             client, body)
            continue
        is_create = step is create
        request = client.request_json(
            step.method, path, json=body, headers=step.headers or None,
            idempotency_key=idempotency_key if is_create else f"{idempotency_key}-{path}",
            timeout=CREATE_TIMEOUT if is_create else None,
        )
        result = await (create_through_interrupt(request, created) if is_create else request)
        if is_create:
            job_id = _response_id(result)
            if job_id:
                created.append(job_id)
            if not job_id:
                raise ClientError(f"{step.method} {path} answered without a job id (got {str(result)[:200]!r})")
            await _refuse_unsafe_id(client, plan.endpoints, job_id)
            if registry is not None:  # recorded at once, so a failing later step still leaves it findable
                _register(registry, plan, client, job_id)
        if step.ref and _response_id(result):
            refs[step.ref] = _response_id(result) or ""
    assert job_id is not None  # create_step exists, so the loop set it or raised
    return Job(job_id, plan.flow, client, endpoints=plan.endpoints, algorithm=plan.algorithm,
               registry=registry, poll_interval=poll_interval, results_folder=plan.results_folder,
               hidden=[s.get_secret_value() for s in plan.secrets])


async def _refuse_unsafe_id(client: AsyncSynthClient, endpoints: FlowEndpoints, job_id: str) -> None:
    """A created job whose id is no job id (``../x``, ESC, 5,000 characters) is never recorded nor written
    anywhere, since ids become file names: it is cancelled (at most ``INTERRUPT_GRACE`` seconds) and refused."""
    problem = job_id_problem(job_id)
    if problem is None:
        return
    status = await cancel_after_interrupt(client, endpoints, job_id)
    raise BackendAnswerError(f"the backend created a job whose id {shown_id(job_id)} is refused ({problem}); "
                             f"nothing was written for it, and it was asked to cancel it: {status}")


def _register(registry: JobRegistry, plan: Plan, client: AsyncSynthClient, job_id: str) -> None:
    registry.record(JobRecord(
        job_id=job_id, flow=plan.flow, backend_url=client.shown_url, algorithm=plan.algorithm,
        config_hash=config_hash(plan.config_path, plan.preview_json()),
        config_path=str(plan.config_path) if plan.config_path else None,
        results_folder=str(plan.results_folder) if plan.results_folder else None,
        submitted_at=datetime.now(UTC).isoformat(timespec="seconds"),
    ))


async def attach(job_id: str, client: AsyncSynthClient, flows: Mapping[str, FlowEndpoints], *,
                 kind_of: Callable[[dict[str, Any]], str | None] | None = None,
                 registry: JobRegistry | None = None, poll_interval: float = 5.0,
                 hidden: Sequence[str] = (), timeout: float | None = None) -> Job:
    """Rebuild a job's full history (status, events, metrics) from the backend; not yet monitored.

    ``flows``: the flows the job may be of, with their endpoints, tried in order (the flow ``registry``
    recorded for the job first), each one's status paths fallbacks included. The job is then named by what
    its status document says it is (``kind_of``), when that is one of ``flows``, else by the flow whose
    paths found it. ``hidden``: the keys resolved where this runs (the plan's are unknown here), masked in
    what the job holds, since a backend may echo any of them. ``timeout``: the most the whole rebuild may
    take (``--poll-timeout``), else ``JobTimeoutError`` saying how much history came (a backend may send
    new history for ever, or drip an answer a byte at a time).
    """
    found: list[Job] = []
    try:
        async with asyncio.timeout(timeout):
            return await _rebuild(job_id, client, flows, kind_of, registry, poll_interval, hidden, found)
    except TimeoutError:
        job = found[0] if found else None
        what = (f"the backend keeps sending new history: {len(job.events):,} events so far"
                if job is not None and job.events else "the backend has not finished its answer")
        raise JobTimeoutError(f"job {job_id}: {what} after {timeout:g}s (--poll-timeout); stopped reading it "
                              f"(the job itself is left as it is)", job_id=job_id,
                              status=job.status if job is not None else None) from None


async def _rebuild(job_id: str, client: AsyncSynthClient, flows: Mapping[str, FlowEndpoints],
                   kind_of: Callable[[dict[str, Any]], str | None] | None, registry: JobRegistry | None,
                   poll_interval: float, hidden: Sequence[str], found: list[Job]) -> Job:
    """``attach``'s work; the job is put in ``found`` as soon as it is made, so a timeout can say how far it got."""
    record = registry.get(job_id) if registry is not None else None
    flow, status_doc = await find_job(job_id, client, flows, kind_of=kind_of, first=record.flow if record else None)
    algorithm = record.algorithm if record else None
    if algorithm is None and isinstance(status_doc.get("algorithm"), str):
        algorithm = status_doc["algorithm"].lower()
    job = Job(job_id, flow, client, endpoints=flows[flow], algorithm=algorithm, registry=registry,
              poll_interval=poll_interval, hidden=hidden)  # its folder: the registry's, if sent from here
    found.append(job)
    await job.refresh()
    return job
