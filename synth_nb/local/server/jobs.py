"""Job routes for the three flows: create/start/status/events/metrics/timeline/cancel.

SFT jobs live under ``/learning/jobs`` (which also serves RL jobs, the fallback 0.2.24 polls), RL under
``/rl/jobs``, prompt learning under ``/prompt-learning/online/jobs`` (ids ``pl_…``, bare-array events
and list, like the hosted backend). A job asked for under another flow's path is 404, never another
job's data. Secrets in a create body (``task_app_api_key``…) are withheld from the stored body and kept
in the runner's memory for the executor; every body served back has them masked.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from synth_nb.local.errors import ApiError, ExecutorInputError, ExecutorUnavailable
from synth_nb.local.event_log import join_records
from synth_nb.local.executors import choose_executor, load_executor, prompt_learning_algorithm
from synth_nb.local.lifecycle import new_id
from synth_nb.local.redact import redact, scrub, secret_values, withhold_secrets
from synth_nb.local.server.http import int_param, json_body
from synth_nb.local.server.state import BackendState, state_of
from synth_nb.local.server.streaming import sse_response, wants_sse
from synth_nb.local.server.validation import check_create_body
from synth_nb.local.storage import JobRecord

__all__ = ["routes", "status_document"]

Handler = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class FlowRoutes:
    base: str
    create_kind: str | None
    #: kinds of job this path family serves
    kinds: frozenset[str]
    id_prefix: str
    bare_lists: bool = False


SFT = FlowRoutes("/learning/jobs", "sft", frozenset({"sft", "rl"}), "job_")
#: the SDK's OpenAI-style variant (``JobsClient.sft``, body uses ``training_file``)
SFT_OPENAI = FlowRoutes("/sft/jobs", "sft", frozenset({"sft"}), "job_")
RL = FlowRoutes("/rl/jobs", "rl", frozenset({"rl"}), "job_")
PL = FlowRoutes("/prompt-learning/online/jobs", "prompt_learning", frozenset({"prompt_learning"}), "pl_",
                bare_lists=True)


def _validation_file_id(body: dict[str, Any]) -> str | None:
    """The SFT validation file: ``validation_file`` (SDK) or ``metadata.effective_config.data.validation_files``."""
    effective = (body.get("metadata") or {}).get("effective_config") or {}
    files = (effective.get("data") or {}).get("validation_files") if isinstance(effective, dict) else None
    found = body.get("validation_file") or (files[0] if isinstance(files, list) and files else None)
    return found if isinstance(found, str) else None


def status_document(job: JobRecord) -> dict[str, Any]:
    """The status object every flow's ``GET …/{job_id}`` returns (``status`` + ``updated_at`` always set)."""
    body = job.body
    raw_data = body.get("data")
    data: dict[str, Any] = raw_data if isinstance(raw_data, dict) else {}
    # the job's outcome comes right after its status: later synth-ai releases print the first 600 characters
    headline = {"best_score": None} if job.kind == "prompt_learning" else {"fine_tuned_model": None}
    doc: dict[str, Any] = {
        "job_id": job.id, "id": job.id, "object": "job", "type": job.kind, "job_type": job.kind,
        "status": job.status, **headline, "created_at": job.created_at, "updated_at": job.updated_at,
        "started_at": job.started_at, "finished_at": job.finished_at, "error": job.error,
        "executor": job.executor, "cancel_requested": job.cancel_requested, "last_seq": job.last_seq,
    }
    if job.kind == "sft":
        doc.update(training_type=body.get("training_type") or "sft_offline", model=body.get("model"),
                   training_file_id=body.get("training_file_id") or body.get("training_file"),
                   validation_file_id=_validation_file_id(body), linked_job_id=None)
    elif job.kind == "rl":
        doc.update(training_type="rl", model=data.get("base_model") or data.get("model") or body.get("model"),
                   endpoint_base_url=data.get("endpoint_base_url") or body.get("endpoint_base_url"),
                   linked_job_id=None)
    else:
        doc.update(algorithm=prompt_learning_algorithm(body), best_prompt=None)
    doc.update(redact(job.result))
    return doc


def _from_synth_nb(request: Request) -> bool:
    """synth-nb's own client, which reads the status again after a job's end (``status_reads``)."""
    return request.headers.get("user-agent", "").startswith("synth-nb/")


def _job_for(request: Request, flow: FlowRoutes) -> JobRecord:
    job_id = request.path_params["job_id"]
    job = state_of(request).storage.get_job(job_id)
    if job is None or job.kind not in flow.kinds:
        raise ApiError(404, f"job {job_id!r} not found under {flow.base}")
    return job


def _executor_for(state: BackendState, kind: str, body: dict[str, Any]) -> str:
    """Pick, check and load the job's executor: 422 for bad bodies, 501 when the executor is missing."""
    try:
        name = choose_executor(kind, body, state.default_executor)
    except ExecutorInputError as exc:
        raise ApiError(422, str(exc)) from None
    check_create_body(kind, body, state.storage, real_executor=name != "replay")
    try:
        executor = load_executor(name)
    except ExecutorUnavailable as exc:
        raise ApiError(501, str(exc)) from None
    try:
        executor.validate(kind, body, state.runner.executor_options.get(name, {}))
    except Exception as exc:  # an executor's validation failure is the caller's input problem
        detail = scrub(f"{name} executor rejected the job: {exc}", secret_values(body))
        raise ApiError(exc.status_code if isinstance(exc, ExecutorInputError) else 422, detail) from None
    return name


def _create(flow: FlowRoutes) -> Handler:
    async def create(request: Request) -> Response:
        state = state_of(request)
        kind = flow.create_kind
        assert kind is not None
        body = await json_body(request)
        # importing an executor (torch…) and its validation may take a while: keep the event loop free
        executor = await run_in_threadpool(_executor_for, state, kind, body)
        key = request.headers.get("idempotency-key") or None
        stored, secrets = withhold_secrets(body)
        job, created = state.storage.create_job(new_id(flow.id_prefix), kind, executor, stored, key)
        if created:
            state.runner.withhold(job.id, secrets)
            if not _from_synth_nb(request):
                state.runner.status_reads.begun_by_client(job.id, time.monotonic())
        auto_start = body.get("auto_start", kind != "sft")
        if created and (kind == "rl" or auto_start):
            job = await run_in_threadpool(_start, state, job.id)
        return JSONResponse(status_document(job), status_code=201 if created else 200)

    return create


def _start(state: BackendState, job_id: str) -> JobRecord:
    try:
        return state.runner.start(job_id)
    except ExecutorUnavailable as exc:
        raise ApiError(501, str(exc)) from None


def _start_route(flow: FlowRoutes) -> Handler:
    async def start(request: Request) -> Response:
        await json_body(request, allow_empty=True)
        job = _job_for(request, flow)
        if not _from_synth_nb(request):
            state_of(request).runner.status_reads.begun_by_client(job.id, time.monotonic())
        return JSONResponse(status_document(await run_in_threadpool(_start, state_of(request), job.id)))

    return start


def _status(flow: FlowRoutes) -> Handler:
    async def status(request: Request) -> Response:
        read_at = time.monotonic()  # before the job is read: a job about to end waits for such a read
        job = _job_for(request, flow)
        if job.status == "running" and not _from_synth_nb(request):
            state_of(request).runner.status_reads.note(job.id, read_at)
        return JSONResponse(status_document(job))

    return status


def _config(flow: FlowRoutes) -> Handler:
    async def config(request: Request) -> Response:
        job = _job_for(request, flow)
        return JSONResponse({"job_id": job.id, "config": redact(job.body)})

    return config


def _cancel(flow: FlowRoutes) -> Handler:
    async def cancel(request: Request) -> Response:
        job = _job_for(request, flow)
        was = job.status
        job = state_of(request).runner.cancel(job.id)
        doc = status_document(job)
        doc["message"] = (f"job already {was}" if was not in ("queued", "running")
                          else "cancelled" if job.status == "cancelled" else "cancellation requested")
        return JSONResponse(doc)

    return cancel


def _events(flow: FlowRoutes, *, stream_only: bool = False) -> Handler:
    async def events(request: Request) -> Response:
        job = _job_for(request, flow)
        state = state_of(request)
        if stream_only or wants_sse(request):
            watching = None if _from_synth_nb(request) else state.runner.status_reads.following(job.id)
            return sse_response(request, state.storage, state.signals, job.id, state.keepalive_seconds, watching)
        since = int_param(request, "since_seq", 0) or 0
        limit = int_param(request, "limit", 200, minimum=1, maximum=10000) or 200
        batch = state.storage.event_records(job.id, since, limit + 1)
        has_more, batch = len(batch) > limit, batch[:limit]
        events = join_records(batch)  # the stored JSON of each event, joined, never parsed
        if flow.bare_lists:
            return Response(events, media_type="application/json")
        next_seq = batch[-1][0] if batch else since
        page = f'{{"events":{events},"has_more":{"true" if has_more else "false"},"next_seq":{next_seq}}}'
        return Response(page, media_type="application/json")

    return events


def _metrics(flow: FlowRoutes) -> Handler:
    async def metrics(request: Request) -> Response:
        job = _job_for(request, flow)
        limit = int_param(request, "limit", 200, minimum=1, maximum=10000) or 200
        after = int_param(request, "after_step", None)
        points = state_of(request).storage.metrics_json(job.id, limit=limit, after_step=after,
                                                        name=request.query_params.get("name") or None)
        return Response(f'{{"points":{points}}}', media_type="application/json")

    return metrics


def _timeline(flow: FlowRoutes) -> Handler:
    async def timeline(request: Request) -> Response:
        job = _job_for(request, flow)
        limit = int_param(request, "limit", 1000, minimum=1, maximum=10000) or 1000
        entries = [{**entry, "job_id": job.id} for entry in job.timeline][-limit:]
        return JSONResponse({"events": entries, "timeline": entries})

    return timeline


#: ``?type=`` values the status CLI may send, mapped to job kinds
_TYPE_ALIASES = {"sft_offline": "sft", "sft": "sft", "rl": "rl", "prompt_learning": "prompt_learning",
                 "": None}


def _list(flow: FlowRoutes) -> Handler:
    async def list_jobs(request: Request) -> Response:
        limit = int_param(request, "limit", 50, minimum=1, maximum=1000) or 50
        status = request.query_params.get("status") or None
        storage = state_of(request).storage
        kind_filter = _TYPE_ALIASES.get(request.query_params.get("type") or "", request.query_params.get("type"))
        jobs = [job for kind in sorted(flow.kinds) if kind_filter in (None, kind)
                for job in storage.list_jobs(kind=kind, status=status, limit=limit)]
        jobs.sort(key=lambda j: j.created_at, reverse=True)
        docs = [status_document(j) for j in jobs[:limit]]
        if flow.bare_lists:
            return JSONResponse(docs)
        return JSONResponse({"jobs": docs, "data": docs, "has_more": False})

    return list_jobs


def _flow_routes(flow: FlowRoutes) -> list[Route]:
    base, item = flow.base, flow.base + "/{job_id}"
    return [
        Route(base, _create(flow), methods=["POST"]),
        Route(base, _list(flow), methods=["GET"]),
        Route(item, _status(flow), methods=["GET"]),
        Route(item + "/status", _status(flow), methods=["GET"]),
        Route(item + "/config", _config(flow), methods=["GET"]),
        Route(item + "/start", _start_route(flow), methods=["POST"]),
        Route(item + "/cancel", _cancel(flow), methods=["POST"]),
        Route(item + "/events", _events(flow), methods=["GET"]),
        Route(item + "/events/stream", _events(flow, stream_only=True), methods=["GET"]),
        Route(item + "/metrics", _metrics(flow), methods=["GET"]),
        Route(item + "/timeline", _timeline(flow), methods=["GET"]),
    ]


async def list_models(request: Request) -> Response:
    """Fine-tuned models of finished SFT/RL jobs (``GET /learning/models``)."""
    models = [{"id": j.result["fine_tuned_model"], "object": "model", "job_id": j.id, "status": "ready",
               "base_model": status_document(j).get("model"), "created_at": j.finished_at}
              for kind in ("sft", "rl") for j in state_of(request).storage.list_jobs(kind=kind, status="succeeded")
              if j.result.get("fine_tuned_model")]
    return JSONResponse({"object": "list", "data": models, "models": models})


routes = [*_flow_routes(SFT), *_flow_routes(SFT_OPENAI), *_flow_routes(RL), *_flow_routes(PL),
          Route("/learning/models", list_models, methods=["GET"])]
