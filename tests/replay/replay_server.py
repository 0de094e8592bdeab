"""A real HTTP server replaying one hosted-backend response shape (``shapes/*.json``) at the contract paths.

A shape file is ``{"about", "job_id", "routes": {path: body}, "since_seq"}``: each route answers ``GET
/api<path>`` with its body as JSON (a body ``{"sse": [{"event", "id", "data"}, ...]}`` as an event stream;
``{"sequence": [body, ...]}`` one body per request, the last one from then on); any other path answers 404,
as a backend without that route does.
``since_seq`` says how an events route treats the cursor: ``"ignored"`` (the default: the whole list every
time, as the hosted route did before it learnt the parameter), ``"seq"`` (items whose seq is above it) or
``"position"`` (the items after that many, for events that carry no seq).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

SHAPES = Path(__file__).with_name("shapes")
#: the API key the replay tests send (the replay server checks none)
KEY = "sk_replay_0000000000000000wxyz"


def load_shape(name: str) -> dict[str, Any]:
    return json.loads((SHAPES / f"{name}.json").read_text(encoding="utf-8"))


def shape_names() -> list[str]:
    return sorted(p.stem for p in SHAPES.glob("*.json"))


@dataclass
class Replay:
    """The running server: its base URL (what ``--backend`` takes) and every path asked for, in order."""

    url: str
    shape: dict[str, Any]
    asked: list[str] = field(default_factory=list)

    @property
    def job_id(self) -> str:
        return str(self.shape["job_id"])


def _page(body: Any, mode: str, since: int) -> Any:
    """An events body cut at the cursor the way the shape's backend cuts it."""
    if mode == "ignored" or since <= 0:
        return body
    items = body if isinstance(body, list) else body.get("events") if isinstance(body, dict) else None
    if not isinstance(items, list):
        return body
    if mode == "seq":
        kept = [e for e in items if not isinstance(e, dict) or not isinstance(e.get("seq"), int) or e["seq"] > since]
    else:
        kept = items[since:]
    return kept if isinstance(body, list) else {**body, "events": kept}


def _handler(replay: Replay) -> type[BaseHTTPRequestHandler]:
    routes: dict[str, Any] = {p.replace("{job_id}", replay.job_id): b for p, b in replay.shape["routes"].items()}
    mode = str(replay.shape.get("since_seq", "ignored"))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            parts = urlsplit(self.path)
            path = parts.path[len("/api"):] if parts.path.startswith("/api/") else parts.path
            replay.asked.append(path)
            if path not in routes:
                self._send(404, {"detail": f"no route {path}"})
                return
            body = routes[path]
            if isinstance(body, dict) and isinstance(body.get("sequence"), list):
                served = replay.asked.count(path) - 1  # one body per request, the last one from then on
                body = body["sequence"][min(served, len(body["sequence"]) - 1)]
            if isinstance(body, dict) and isinstance(body.get("sse"), list):
                self._send_stream(body["sse"])
                return
            if path.endswith("/events"):
                since = int((parse_qs(parts.query).get("since_seq") or ["0"])[0])
                body = _page(body, mode, since)
            self._send(200, body)

        def do_POST(self) -> None:  # noqa: N802
            self._send(404, {"detail": "this replay serves reads only"})

        def _send(self, code: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send_stream(self, frames: list[dict[str, Any]]) -> None:
            """Server-Sent Events: each frame's ``event``, ``id`` (when given) and JSON ``data``; then close."""
            text = "".join((f"event: {f['event']}\n" if f.get("event") else "") + (f"id: {f['id']}\n" if "id" in f else "")
                           + f"data: {json.dumps(f['data'])}\n\n" for f in frames)
            data = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the stdlib's name)
            pass

    return Handler


@contextmanager
def serve(name: str) -> Iterator[Replay]:
    """Serve shape ``name`` on 127.0.0.1 (a free port) in a thread until the block ends."""
    with serve_shape(load_shape(name)) as replay:
        yield replay


@contextmanager
def serve_shape(shape: dict[str, Any]) -> Iterator[Replay]:
    """Serve a shape given as its document (``load_shape``'s), as ``serve`` does."""
    replay = Replay("", shape)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(replay))
    replay.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name=f"replay-{replay.job_id}", daemon=True)
    thread.start()
    try:
        yield replay
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
