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
