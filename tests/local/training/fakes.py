"""Test doubles for the training executors: a JobContext and a loopback OpenAI-compatible policy route."""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class PolicyServer:
    """``POST /v1/policies/{id}/chat/completions`` -> the registered handler (like the backend's route)."""

    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}
        #: chat requests received, whatever their outcome
        self.calls = 0
        routes = self.handlers
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                owner.calls += 1
                parts = self.path.split("?")[0].strip("/").split("/")
                handler = routes.get(parts[2]) if len(parts) > 2 else None
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                try:
                    if handler is None:
                        raise KeyError("no such policy")
                    status, payload = 200, handler(body)
                except Exception as exc:
                    status, payload = 502, {"detail": str(exc)}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class FakeContext:
    """Records what an executor reports; files are registered with ``add_file``."""

    def __init__(self, kind: str, body: dict[str, Any], work_dir: Path, policies: PolicyServer | None = None,
                 environment_api_key: str | None = None) -> None:
        self.job_id = f"job_{secrets.token_hex(8)}"
        self.kind = kind
        self.body = body
        self.work_dir = work_dir / self.job_id
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.cancelled = threading.Event()
        self.backend_url = policies.url if policies else ""
        self.environment_api_key = environment_api_key
        self.events: list[dict[str, Any]] = []
        self.metrics: list[dict[str, Any]] = []
        self.result: dict[str, Any] = {}
        self.files: dict[str, Path] = {}
        self._policies = policies
        self._lock = threading.Lock()

    def add_file(self, path: Path) -> str:
        file_id = f"file_{secrets.token_hex(6)}"
        self.files[file_id] = path
        return file_id

    def emit(self, type: str, message: str = "", data: dict[str, Any] | None = None, level: str = "info") -> None:
        with self._lock:
            self.events.append({"type": type, "message": message, "data": data or {}, "level": level})

    def metric(self, name: str, step: int, value: float, data: dict[str, Any] | None = None) -> None:
        with self._lock:
            self.metrics.append({"name": name, "step": step, "value": value, "data": data or {}})

    def update_result(self, **fields: Any) -> None:
        with self._lock:
            self.result.update(fields)

    def file_path(self, file_id: str) -> Path:
        return self.files[file_id]

    def serve_policy(self, handler: Any) -> str:
        assert self._policies is not None, "this test context serves no policies"
        policy_id = f"pol_{secrets.token_hex(6)}"
        self._policies.handlers[policy_id] = handler
        return f"{self._policies.url}/v1/policies/{policy_id}"

    def event_types(self) -> list[str]:
        return [e["type"] for e in self.events]

    def series(self, name: str) -> list[float]:
        return [m["value"] for m in self.metrics if m["name"] == name]


def write_chat_jsonl(path: Path, n: int = 24) -> Path:
    """A small chat dataset with an easy pattern (reply = the country's capital)."""
    pairs = [("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"), ("Peru", "Lima"), ("Kenya", "Nairobi"),
             ("Chile", "Santiago")]
    lines = []
    for i in range(n):
        country, capital = pairs[i % len(pairs)]
        lines.append(json.dumps({"messages": [{"role": "system", "content": "Answer with the capital."},
                                              {"role": "user", "content": f"Capital of {country}?"},
                                              {"role": "assistant", "content": capital}]}))
    path.write_text("\n".join(lines) + "\n")
    return path


def cancel_once(run: Callable[[FakeContext], Any], ctx: FakeContext, started: Callable[[], bool]) -> None:
    """Run ``run(ctx)`` in a thread, cancel it once ``started()`` says so, and see it stop."""
    runner = threading.Thread(target=run, args=(ctx,))
    runner.start()
    while runner.is_alive() and not started():
        runner.join(0.1)
    ctx.cancelled.set()
    runner.join(120)
    assert not runner.is_alive()


class LoopChannel:
    """A training loop's ``Channel`` in the test's own process: what it reports is kept, and chat requests
    reach it through ``serve_slot`` handlers (a ``PolicyServer`` route), as the worker's stdin would bring them.

    Running a loop here rather than in a worker process lets a test watch the loop's torch calls (a
    ``TorchFunctionMode`` is per thread; the loop does its torch work on the thread that runs it)."""

    def __init__(self) -> None:
        import os

        from synth_nb.local.training.channel import Channel

        read_end, self._write_end = os.pipe()  # open until ``close``: an ended stdin means "cancelled"
        self.channel = Channel(self, os.fdopen(read_end, encoding="utf-8"))
        self.events: list[dict[str, Any]] = []
        self.metrics: list[dict[str, Any]] = []
        self.result: dict[str, Any] = {}
        self._waiting: dict[str, tuple[threading.Event, dict[str, Any]]] = {}

    def write(self, line: str) -> None:
        msg = json.loads(line)
        if msg["op"] == "event":
            self.events.append(msg)
        elif msg["op"] == "metric":
            self.metrics.append(msg)
        elif msg["op"] == "result":
            self.result.update(msg["fields"])
        elif msg["op"] == "chat_response" and msg["id"] in self._waiting:
            done, answer = self._waiting[msg["id"]]
            answer.update(msg)
            done.set()

    def flush(self) -> None:
        pass

    def serve_slot(self, slot: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def handle(request: dict[str, Any]) -> dict[str, Any]:
            request_id = secrets.token_hex(8)
            done, answer = self._waiting[request_id] = (threading.Event(), {})
            self.channel.chat_requests.put({"op": "chat", "id": request_id, "slot": slot, "request": request})
            assert done.wait(120), "the loop did not answer a chat request"
            del self._waiting[request_id]
            if answer.get("error"):
                raise RuntimeError(answer["error"])
            return dict(answer["response"])

        return handle

    def close(self) -> None:
        import os

        os.close(self._write_end)

    def series(self, name: str) -> list[float]:
        return [m["value"] for m in self.metrics if m["name"] == name]


def grpo_config(body: dict[str, Any], ctx: FakeContext, policies: PolicyServer, loop: LoopChannel,
                task_key: str | None) -> dict[str, Any]:
    """The worker config the RL executor would send for ``body``, its policy slots served by ``loop``."""
    from synth_nb.local.executors._training import announce_model, local_settings
    from synth_nb.local.executors.rl import rl_settings
    from synth_nb.local.training.model_choice import choose_model

    choice = choose_model(None)
    settings = rl_settings(body, choice)
    slots = max(settings["batch_size"] * settings["group_size"], len(settings["eval_seeds"]))
    urls = []
    for slot in range(slots):
        policy_id = f"pol_{secrets.token_hex(6)}"
        policies.handlers[policy_id] = loop.serve_slot(slot)
        urls.append(f"{policies.url}/v1/policies/{policy_id}")
    return {**settings, **local_settings(body), "job_id": ctx.job_id, "work_dir": str(ctx.work_dir),
            "task_url": body["data"]["endpoint_base_url"], "task_key": task_key, "model_label": "test",
            "fine_tuned_model": f"rl:test:{ctx.job_id}", "model_choice": announce_model(ctx, "rl", choice),
            "policy_urls": urls}
