"""A hostile backend: a small Starlette app on uvicorn (real HTTP on 127.0.0.1) that speaks the job contract
of the Synth backend and answers what an attacker's backend would.

It serves every job collection the client asks (``/api/prompt-learning/online/jobs``, ``/api/rl/jobs``,
``/api/learning/jobs``, ...): a create answers with the next planned ``HostileJob`` (its id may be
``../../x``), and a job's status, events, metrics, timeline and cancel paths answer that job's documents,
or raw bodies: a status nested 200,000 levels, 200 MiB of status, events dripping a byte every two seconds,
pages that always bring 5,000 new events. Ids travel percent-encoded in paths, so routing reads the raw path.

Reusable: ``serve()`` runs it in a thread for a test; ``python tests/hostile/hostile_backend.py SCENARIO``
runs one of ``SCENARIOS`` on its own (for a notebook panel or a terminal to be pointed at by hand).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

API_KEY = "sk_hostile_CANARY_0123456789abcdef"
#: control sequences a terminal acts on: OSC 0 (window title), OSC 52 (clipboard), OSC 8 (link), CSI 2J
#: (clear), cursor up + erase line (a forged line), DCS, a C1 CSI, the right-to-left override
HOSTILE_TEXT = ("\x1b]0;pwned-title\x07\x1b]52;c;cHduZWQ=\x07\x1b]8;;http://evil.example\x07link\x1b]8;;\x07"
                "\x1b[2J\x1b[1A\x1b[2KFinal status: succeeded\x1bP+q544e\x1b\\\x9b31m\u202edesrever")
#: job ids no client may turn into a path
HOSTILE_IDS = {"dotdot-path": "../../../outside/x", "absolute": str(Path(tempfile.gettempdir()) / "synth-nb-hostile-abs"), "dotdot": "..",
               "escape": "pl_\x1b]0;t\x07", "nul": "pl_a\x00b", "slash": "pl_a/b", "long": "pl_" + "a" * 5000}

Body = bytes | Callable[[], AsyncIterator[bytes]]
_ids = itertools.count(1)


def good_id() -> str:
    return f"pl_{next(_ids):016x}"


@dataclass
class HostileJob:
    """One job as the hostile backend answers it."""

    id: str
    status: dict[str, Any] = field(default_factory=lambda: {"status": "succeeded"})
    events: list[dict[str, Any]] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    timeline: list[dict[str, Any]] | None = None
    #: raw answers instead of the documents (bytes, or a factory of an async byte stream)
    status_body: Body | None = None
    events_body: Body | None = None
    metrics_body: Body | None = None
    create_body: Body | None = None
    #: each events page brings this many new events, for ever (0: the ``events`` list)
    endless_events: int = 0
    #: the create answer (default ``{"job_id": id, "status": "queued"}``)
    create_answer: dict[str, Any] | None = None
    cancels: int = 0
    #: the HTTP status the status document is sent with (403: ``status`` is the error body)
    status_code: int = 200


@dataclass
class HostileState:
    #: the jobs the next creates make, in order (then well-behaved jobs)
    planned: list[HostileJob] = field(default_factory=list)
    jobs: dict[str, HostileJob] = field(default_factory=dict)
    #: (method, raw path) of every request
    requests: list[tuple[str, str]] = field(default_factory=list)

    def add(self, job: HostileJob) -> HostileJob:
        self.jobs[job.id] = job
        return job


def good_job(job_id: str | None = None) -> HostileJob:
    """A job that behaves: succeeded, a few events and metric points."""
    job_id = job_id or good_id()
    events = [{"seq": i, "type": "prompt.learning.progress", "level": "info", "message": f"step {i}",
               "data": {"step": i}} for i in range(1, 4)]
    metrics = [{"name": "gepa.best_score", "step": i, "value": 0.1 * i} for i in range(1, 3)]
    return HostileJob(job_id, {"job_id": job_id, "status": "succeeded", "best_score": 0.2}, events, metrics)


def control_text_job(job_id: str | None = None, *, status: str = "failed") -> HostileJob:
    """Every string the client prints carries ``HOSTILE_TEXT``: status error, algorithm, event type, message,
    error details, traceback, metric name, timeline phase."""
    job_id = job_id or good_id()
    text = HOSTILE_TEXT
    events = [
        {"seq": 1, "type": f"prompt.learning.progress{text}", "level": "info", "message": f"hello {text}"},
        {"seq": 2, "type": "prompt.learning.failed", "level": "error", "message": f"boom {text}",
         "data": {"error": f"detail {text}", "traceback": f"Trace (most recent call last):\n  line {text}\nValueError: {text}"}},
        {"seq": 3, "type": "prompt.learning.progress", "level": "info", "message": f"multi\nline\r{text}"},
    ]
    metrics = [{"name": f"gepa.best_score{text}", "step": 1, "value": 0.5}]
    doc = {"job_id": job_id, "status": status, "error": f"failed {text}", "algorithm": f"gepa{text}",
           "fine_tuned_model": f"ft:{text}"}
    return HostileJob(job_id, doc, events, metrics, timeline=[{"phase": f"training{text}", "message": text}])


def nested_body(depth: int = 200_000) -> bytes:
    return b'{"status": "running", "x": ' + b"[" * depth + b"]" * depth + b"}"


def huge_body(mib: int = 200, *, declared: bool = False) -> Callable[[], AsyncIterator[bytes]]:
    """``mib`` MiB of status document, streamed a MiB at a time (``declared``: with its Content-Length)."""
    async def stream() -> AsyncIterator[bytes]:
        yield b'{"status": "running", "pad": "'
        chunk = b"x" * 2**20
        for _ in range(mib):
            yield chunk
        yield b'"}'

    stream.declared = declared  # type: ignore[attr-defined]
    stream.size = mib * 2**20 + 32  # type: ignore[attr-defined]
    return stream


def drip_body(every: float = 2.0) -> Callable[[], AsyncIterator[bytes]]:
    """An answer that never ends: one byte every ``every`` seconds."""
    async def stream() -> AsyncIterator[bytes]:
        yield b'{"events": ['
        while True:
            await asyncio.sleep(every)
            yield b" "

    return stream


def _endless_page(job: HostileJob, since: int, limit: int) -> bytes:
    count = min(limit, job.endless_events)
    return json.dumps({"events": [{"seq": since + i, "type": "prompt.learning.progress", "level": "info",
                                   "message": f"event {since + i}"} for i in range(1, count + 1)]}).encode()


def build_app(state: HostileState) -> Starlette:
    async def answer(body: Body) -> Response:
        if isinstance(body, bytes):
            return Response(body, media_type="application/json")
        headers = {"content-length": str(body.size)} if getattr(body, "declared", False) else None  # type: ignore[attr-defined]
        return StreamingResponse(body(), media_type="application/json", headers=headers)

    async def dispatch(request: Request) -> Response:
        raw = request.scope.get("raw_path", request.url.path.encode()).decode("latin-1").split("?", 1)[0]
        state.requests.append((request.method, raw))
        parts = [unquote(p) for p in raw.strip("/").split("/")]
        if "jobs" not in parts:
            return JSONResponse({"detail": "not found"}, status_code=404)
        rest = parts[parts.index("jobs") + 1:]
        if not rest:
            if request.method != "POST":
                return JSONResponse({"jobs": []})
            job = state.planned.pop(0) if state.planned else good_job()
            state.add(job)
            if job.create_body is not None:
                return await answer(job.create_body)
            return JSONResponse(job.create_answer or {"job_id": job.id, "status": "queued"}, status_code=201)
        job_id, what = rest[0], "/".join(rest[1:])
        found = state.jobs.get(job_id)
        if found is None:
            return JSONResponse({"detail": f"no job {job_id}"}, status_code=404)
        if what == "":
            if found.status_body is not None:
                return await answer(found.status_body)
            return JSONResponse(found.status, status_code=found.status_code)
        if what == "events":
            if found.events_body is not None:
                return await answer(found.events_body)
            query = parse_qs(request.url.query)
            since, limit = int(query.get("since_seq", ["0"])[0]), int(query.get("limit", ["200"])[0])
            if found.endless_events:
                return Response(_endless_page(found, since, limit), media_type="application/json")
            return JSONResponse({"events": [e for e in found.events if e["seq"] > since][:limit]})
        if what == "metrics":
            if found.metrics_body is not None:
                return await answer(found.metrics_body)
            return JSONResponse({"points": found.metrics})
        if what == "timeline" and found.timeline is not None:
            return JSONResponse({"events": found.timeline})
        if what == "cancel" and request.method == "POST":
            found.cancels += 1
            found.status = {**found.status, "status": "cancelled"}
            return JSONResponse({"status": "cancelled"})
        return JSONResponse({"detail": "not found"}, status_code=404)

    methods = ["GET", "POST"]
    return Starlette(routes=[Route("/{path:path}", dispatch, methods=methods)])


@dataclass
class HostileBackend:
    url: str
    state: HostileState
    api_key: str = API_KEY

    def plan(self, *jobs: HostileJob) -> None:
        """The jobs the next creates make, in order."""
        self.state.planned.extend(jobs)

    def add(self, job: HostileJob) -> HostileJob:
        return self.state.add(job)

    def job(self, job_id: str) -> HostileJob:
        return self.state.jobs[job_id]


class _Server(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # it runs in a thread
        pass


@contextlib.contextmanager
def serve(state: HostileState | None = None, port: int = 0) -> Iterator[HostileBackend]:
    """The hostile backend on 127.0.0.1 (``port`` 0: any free one) in a thread, until the block ends."""
    state = state or HostileState()
    config = uvicorn.Config(build_app(state), host="127.0.0.1", port=port, log_level="critical", lifespan="off",
                            timeout_graceful_shutdown=1)
    server = _Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not server.started:
        raise RuntimeError("the hostile backend did not start")
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield HostileBackend(f"http://127.0.0.1:{bound}", state)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


#: whole scenarios by name, for running the server by hand: each returns the state to serve
SCENARIOS: dict[str, Callable[[], HostileState]] = {
    "control-text": lambda: HostileState(planned=[control_text_job() for _ in range(20)]),
    "bad-ids": lambda: HostileState(planned=[HostileJob(i) for i in HOSTILE_IDS.values()]),
    "nested-status": lambda: HostileState(planned=[HostileJob(good_id(), status_body=nested_body())]),
    "huge-status": lambda: HostileState(planned=[HostileJob(good_id(), status_body=huge_body())]),
    "drip-events": lambda: HostileState(planned=[HostileJob(good_id(), {"status": "running"},
                                                            events_body=drip_body())]),
    "endless-history": lambda: HostileState(planned=[HostileJob(good_id(), endless_events=5000)]),
}


def main() -> None:  # pragma: no cover - run by hand
    parser = argparse.ArgumentParser(description="Serve a hostile Synth backend on 127.0.0.1.")
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    with serve(SCENARIOS[args.scenario](), args.port) as backend:
        print(f"{args.scenario}: {backend.url}  (SYNTH_API_KEY={backend.api_key}); Ctrl-C stops it", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":  # pragma: no cover
    main()
