"""Fixtures: a small in-test backend (Starlette on uvicorn, real HTTP on 127.0.0.1) and a fault-injecting transport.

The fake speaks the parts of the backend contract the client uses: files, job create (with
Idempotency-Key), start, status, events (JSON and SSE), metrics (newest-N / after_step), cancel, verify.
Jobs produce events/metrics from ``metadata.fake`` in the create body.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import stamina
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from synth_nb.contract import FlowEndpoints

API_KEY = "sk_test_canary_0123456789abcdef"
PREFIXES = {"learning": "learning/jobs", "rl": "rl/jobs", "pl": "prompt-learning/online/jobs",
            "toy": "toy/jobs"}  # the fourth flow of tests/flows/toy_flow
#: flow name -> the fake's job kind (its paths follow the real flows' layout)
FLOW_KINDS = {"sft": "learning", "rl": "rl", "prompt_learning": "pl"}


def fake_endpoints(flow: str) -> FlowEndpoints:
    """The paths the fake serves for ``flow``'s jobs (only SFT jobs wait for a start call)."""
    base = "/" + PREFIXES[FLOW_KINDS[flow]]
    return FlowEndpoints(
        create=base, status=base + "/{job_id}", events=base + "/{job_id}/events",
        metrics=base + "/{job_id}/metrics", cancel=base + "/{job_id}/cancel",
        events_stream=base + "/{job_id}/events/stream", start=base + "/{job_id}/start" if flow == "sft" else None,
    )


@dataclass
class FakeJob:
    id: str
    kind: str
    body: dict[str, Any]
    status: str = "queued"
    updated: float = field(default_factory=time.time)
    events: list[dict[str, Any]] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    insert_times: dict[int, float] = field(default_factory=dict)
    cancelled: bool = False
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def doc(self) -> dict[str, Any]:
        return {"job_id": self.id, "status": self.status, "updated_at": f"{self.updated:.6f}",
                "created_at": "2026-01-01T00:00:00Z"}


@dataclass
class FakeState:
    api_key: str = API_KEY
    sse: bool = True
    jobs: dict[str, FakeJob] = field(default_factory=dict)
    idempotency: dict[str, str] = field(default_factory=dict)
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    created: int = 0
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    #: seconds a handler waits: "upload", "create" before storing, "created" after creating the job and
    #: before answering, "start" and "cancel" before acting (for tests that interrupt a request in flight)
    delays: dict[str, float] = field(default_factory=dict)
    #: every job runs until cancelled (as ``metadata.fake.hang`` does for one job)
    hang: bool = False
    #: a careless backend: an event repeats the create body and the request headers (keys included)
    echo: bool = False


def _error(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def build_app(state: FakeState) -> Starlette:
    def authorised(request: Request) -> bool:
        state.requests.append((request.method, request.url.path, dict(request.headers)))
        return request.headers.get("authorization") == f"Bearer {state.api_key}"

    def find(request: Request, kind: str) -> FakeJob | None:
        job = state.jobs.get(request.path_params["job_id"])
        return job if job is not None and job.kind == kind else None

    async def produce(job: FakeJob) -> None:
        spec = job.body.get("metadata", {}).get("fake", {})
        n_events, n_metrics = int(spec.get("events", 5)), int(spec.get("metrics", 0))
        interval, batch = float(spec.get("interval", 0.0)), int(spec.get("batch", 50))
        job.status, job.updated = "running", time.time()
        add_event(job, f"{job.kind}.started", "started")
        for i in range(max(n_events, n_metrics)):
            if job.cancelled:
                return
            if spec.get("stop"):
                break
            if i < n_events:
                add_event(job, spec.get("type", f"{job.kind}.progress"), f"step {i}", {"step": i})
            if i < n_metrics:
                job.metrics.append({"name": "train.loss", "step": i, "value": 1.0 / (i + 1), "created_at": "x"})
                if i % 10 == 0:
                    job.metrics.append({"name": "val.loss", "step": i, "value": 2.0 / (i + 1)})
            job.changed.set()
            if (i + 1) % batch == 0 or interval:
                await asyncio.sleep(interval)
        if spec.get("hang", state.hang):
            return
        final = spec.get("final", "succeeded")
        add_event(job, f"{job.kind}.job.completed" if final == "succeeded" else f"{job.kind}.job.failed",
                  f"job {final}", {"detail": "boom"} if final != "succeeded" else {},
                  level="info" if final == "succeeded" else "error")
        job.status, job.updated = final, time.time()
        job.changed.set()

    def add_event(job: FakeJob, type_: str, message: str, data: dict[str, Any] | None = None,
                  level: str = "info") -> None:
        seq = len(job.events) + 1
        job.events.append({"seq": seq, "type": type_, "message": message, "level": level, "data": data or {},
                           "created_at": "2026-01-01T00:00:00Z"})
        job.insert_times[seq] = time.perf_counter()
        job.changed.set()

    def make_create(kind: str, auto_start: bool) -> Any:
        async def create(request: Request) -> Response:
            if not authorised(request):
                return _error(401, "invalid api key")
            try:
                body = await request.json()
            except ValueError:
                return _error(400, "body is not JSON")
            if not isinstance(body, dict):
                return _error(422, "body must be an object")
            if body.get("metadata", {}).get("reject"):
                return _error(422, "model 'nope' is not supported")
            await asyncio.sleep(state.delays.get("create", 0.0))
            key = request.headers.get("idempotency-key")
            if key and key in state.idempotency:
                return JSONResponse(state.jobs[state.idempotency[key]].doc(), status_code=200)
            state.created += 1
            job_id = f"{'pl' if kind == 'pl' else 'job'}_{next(state.counter):016x}"
            job = FakeJob(job_id, kind, body)
            state.jobs[job_id] = job
            if key:
                state.idempotency[key] = job_id
            add_event(job, f"{kind}.created", "created")
            if state.echo:
                headers = dict(request.headers)
                add_event(job, f"{kind}.debug", f"request {json.dumps(body)} {headers.get('authorization')}",
                          {"body": body, "headers": headers})
            if auto_start:
                asyncio.get_running_loop().create_task(produce(job))
            await asyncio.sleep(state.delays.get("created", 0.0))
            return JSONResponse(job.doc(), status_code=201)
        return create

    def make_start(kind: str) -> Any:
        async def start(request: Request) -> Response:
            if not authorised(request):
                return _error(401, "invalid api key")
            job = find(request, kind)
            if job is None:
                return _error(404, "job not found")
            await asyncio.sleep(state.delays.get("start", 0.0))
            if job.status == "queued":
                job.status = "running"
                asyncio.get_running_loop().create_task(produce(job))
            return JSONResponse(job.doc())
        return start

    def make_get(kind: str, what: str) -> Any:
        async def get(request: Request) -> Response:
            if not authorised(request):
                return _error(401, "invalid api key")
            job = find(request, kind)
            if job is None:
                return _error(404, "job not found")
            if what == "status":
                return JSONResponse(job.doc())
            if what == "events":
                if "text/event-stream" in request.headers.get("accept", ""):
                    return sse_response(request, job)
                since = int(request.query_params.get("since_seq", 0))
                limit = int(request.query_params.get("limit", 200))
                return JSONResponse({"events": [e for e in job.events if e["seq"] > since][:limit]})
            if what == "stream":
                if not state.sse:
                    return _error(404, "no stream")
                return sse_response(request, job)
            limit = int(request.query_params.get("limit", 200))
            after = request.query_params.get("after_step")
            if after is None:
                return JSONResponse({"points": job.metrics[-limit:]})
            points = sorted((p for p in job.metrics if p["step"] > int(after)), key=lambda p: p["step"])
            return JSONResponse({"points": points[:limit]})
        return get

    def sse_response(request: Request, job: FakeJob) -> Response:
        since = int(request.headers.get("last-event-id") or request.query_params.get("since_seq", 0))

        async def frames() -> AsyncIterator[bytes]:
            cursor = since
            yield b": connected\n\n"
            while True:
                job.changed.clear()
                fresh = [e for e in job.events if e["seq"] > cursor]
                for event in fresh:
                    cursor = event["seq"]
                    yield f"id: {cursor}\nevent: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                if job.status in ("succeeded", "failed", "cancelled", "error") and not fresh:
                    return
                if not fresh:
                    try:
                        await asyncio.wait_for(job.changed.wait(), 0.5)
                    except TimeoutError:
                        yield b": keep-alive\n\n"

        return StreamingResponse(frames(), media_type="text/event-stream")

    def make_cancel(kind: str) -> Any:
        async def cancel(request: Request) -> Response:
            if not authorised(request):
                return _error(401, "invalid api key")
            job = find(request, kind)
            if job is None:
                return _error(404, "job not found")
            await asyncio.sleep(state.delays.get("cancel", 0.0))
            if job.status not in ("succeeded", "failed", "cancelled"):
                job.cancelled = True
                add_event(job, "job.cancelled", "cancelled by user", level="warning")
                job.status, job.updated = "cancelled", time.time()
            return JSONResponse({"job_id": job.id, "status": "cancelling", "message": "cancel requested"})
        return cancel

    async def upload(request: Request) -> Response:
        if not authorised(request):
            return _error(401, "invalid api key")
        form = await request.form()
        upload_file = form.get("file")
        if upload_file is None or isinstance(upload_file, str):
            return _error(400, "missing file")
        await asyncio.sleep(state.delays.get("upload", 0.0))
        content = await upload_file.read()
        file_id = f"file_{next(state.counter):08x}"
        state.files[file_id] = {"id": file_id, "purpose": form.get("purpose"), "content": content,
                                "filename": upload_file.filename,
                                "fields": {k: v for k, v in form.items() if k != "file"}}
        return JSONResponse({"id": file_id, "purpose": form.get("purpose"), "bytes": len(content)})

    async def verify(request: Request) -> Response:
        if not authorised(request):
            return _error(401, "invalid api key")
        body = await request.json()
        ok = "unreachable" not in body.get("endpoint_base_url", "")
        return JSONResponse({"any_ok": ok, "attempts": [{"status": 200 if ok else 502}]})

    def make_list(kind: str) -> Any:
        async def list_jobs(request: Request) -> Response:
            if not authorised(request):
                return _error(401, "invalid api key")
            limit = int(request.query_params.get("limit", 20))
            return JSONResponse({"jobs": [j.doc() for j in state.jobs.values() if j.kind == kind][:limit]})
        return list_jobs

    routes = [Route("/api/files", upload, methods=["POST"]),
              Route("/api/rl/verify_task_app", verify, methods=["POST"])]
    for kind, prefix in PREFIXES.items():
        base = f"/api/{prefix}"
        routes += [
            Route(base, make_create(kind, auto_start=kind != "learning"), methods=["POST"]),
            Route(base, make_list(kind), methods=["GET"]),
            Route(base + "/{job_id}", make_get(kind, "status")),
            Route(base + "/{job_id}/start", make_start(kind), methods=["POST"]),
            Route(base + "/{job_id}/events", make_get(kind, "events")),
            Route(base + "/{job_id}/events/stream", make_get(kind, "stream")),
            Route(base + "/{job_id}/metrics", make_get(kind, "metrics")),
            Route(base + "/{job_id}/cancel", make_cancel(kind), methods=["POST"]),
        ]
    return Starlette(routes=routes)


@dataclass
class FakeBackend:
    url: str
    api_key: str
    state: FakeState
    loop: asyncio.AbstractEventLoop

    def job(self, job_id: str) -> FakeJob:
        return self.state.jobs[job_id]

    @staticmethod
    def endpoints(flow: str) -> FlowEndpoints:
        return fake_endpoints(flow)


class _Server(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # running in a thread
        pass


@pytest.fixture
def fake_backend() -> Iterator[FakeBackend]:
    state = FakeState()
    config = uvicorn.Config(build_app(state), host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = _Server(config)
    loop_holder: dict[str, asyncio.AbstractEventLoop] = {}

    def serve() -> None:
        loop = asyncio.new_event_loop()
        loop_holder["loop"] = loop
        loop.run_until_complete(server.serve())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield FakeBackend(f"http://127.0.0.1:{port}", API_KEY, state, loop_holder["loop"])
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def no_backoff() -> Iterator[None]:
    """Retries without sleeping (stamina test mode), keeping up to 6 attempts per request."""
    with stamina.set_testing(True, attempts=6, cap=True):
        yield


# -- faults -------------------------------------------------------------------------------------


class FaultyTransport(httpx.AsyncBaseTransport):
    """Forwards to a real transport but injects faults a real server cannot produce on demand.

    Kinds: ``refused`` (connect error before sending), ``reset`` (request reaches the server, response
    lost), ``500``, ``429`` (with Retry-After), ``stall`` (read timeout), ``truncate`` (an SSE or JSON
    body cut mid-frame). ``rate`` is the probability of a fault per request.
    """

    KINDS = ("refused", "reset", "500", "429", "stall", "truncate")

    def __init__(self, rate: float = 0.3, seed: int = 7, kinds: tuple[str, ...] = KINDS) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.rate = rate
        self.random = random.Random(seed)
        self.kinds = kinds
        self.faults: dict[str, int] = {k: 0 for k in kinds}

    @property
    def total(self) -> int:
        return sum(self.faults.values())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.random.random() >= self.rate:
            return await self.inner.handle_async_request(request)
        kind = self.random.choice(self.kinds)
        self.faults[kind] += 1
        if kind == "refused":
            raise httpx.ConnectError("connection refused (injected)", request=request)
        if kind == "500":
            return httpx.Response(500, json={"detail": "injected failure"}, request=request)
        if kind == "429":
            return httpx.Response(429, headers={"Retry-After": "1"}, json={"detail": "slow down"}, request=request)
        if kind == "stall":
            await asyncio.sleep(0.01)
            raise httpx.ReadTimeout("stalled (injected)", request=request)
        response = await self.inner.handle_async_request(request)
        if kind == "reset":
            await response.aclose()
            raise httpx.ReadError("connection reset by peer (injected)", request=request)
        if "text/event-stream" in response.headers.get("content-type", ""):
            self.faults[kind] -= 1  # counted by the stream once it really cuts
            stream = _Truncated(response, self.random.randint(1, 3000), self)
        else:
            body = b"".join([chunk async for chunk in response.aiter_raw()])
            await response.aclose()
            stream = _Truncated(_Bytes(body), self.random.randint(0, max(0, len(body) - 1)), None)
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        return httpx.Response(response.status_code, headers=headers, stream=stream, request=request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Bytes:
    """Looks enough like a response for ``_Truncated`` (an already-read body)."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        yield self.body

    async def aclose(self) -> None:
        pass


class _Truncated(httpx.AsyncByteStream):
    def __init__(self, response: Any, cut: int, counter: FaultyTransport | None) -> None:
        self.response = response
        self.cut = cut
        self.counter = counter

    async def __aiter__(self) -> AsyncIterator[bytes]:
        sent = 0
        try:
            async for chunk in self.response.aiter_raw():
                if sent + len(chunk) > self.cut:
                    if self.counter is not None:
                        self.counter.faults["truncate"] += 1
                    yield chunk[: self.cut - sent]
                    raise httpx.RemoteProtocolError("peer closed connection mid-body (injected)")
                sent += len(chunk)
                yield chunk
        finally:
            await self.response.aclose()

    async def aclose(self) -> None:
        await self.response.aclose()


@pytest.fixture
def faulty_transport() -> type[FaultyTransport]:
    """The fault-injecting transport class (a fixture so tests in other folders can use it)."""
    return FaultyTransport
