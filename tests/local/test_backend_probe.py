"""Asking whether an embedded backend runs (``describe_backend``: ``synth-nb backend --status``, finding the data
folder's backend) proves the key before sending it, and needs no httpx for the backend's own URL.

A small real HTTP server on 127.0.0.1 answers the key proof as a backend holding ``KEY`` would (or for another
address, as a relay would), and the description only to that key; the probe runs in a fresh process, which
says what it found and whether it imported httpx.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from synth_nb.local.key_files import key_proof
from synth_nb.local.shared import SERVICE

KEY = "sk_probe_0123456789abcdef"


def _server(address_in_proof: str | None) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            parts = urlsplit(self.path)
            if parts.path == "/local-backend/proof":
                nonce = parse_qs(parts.query)["nonce"][0]
                host, port = self.server.server_address[:2]
                body = {"service": SERVICE, "proof": key_proof(KEY, nonce, address_in_proof or f"{host}:{port}")}
            elif parts.path == "/api/v1/local-backend" and self.headers.get("Authorization") == f"Bearer {KEY}":
                body = {"service": SERVICE, "pid": 4242, "jobs": {"running": 1}}
            else:
                self.send_response(401)
                self.end_headers()
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            return

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


@pytest.fixture
def serve() -> Iterator[object]:
    started: list[ThreadingHTTPServer] = []

    def start(address_in_proof: str | None = None) -> str:
        server = _server(address_in_proof)
        started.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in started:
        server.shutdown()
        server.server_close()


def _probe(url: str, key: str) -> tuple[str, dict[str, object], bool]:
    code = ("import json, sys\nfrom synth_nb.local.shared import describe_backend\n"
            f"state, about = describe_backend({url!r}, {key!r}, jobs=True, timeout=30)\n"
            "print(json.dumps([state, about, 'httpx' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    state, about, httpx_imported = json.loads(out)
    return state, about, httpx_imported


def test_a_backend_that_proves_the_key_is_described_without_httpx(serve) -> None:  # type: ignore[no-untyped-def]
    state, about, httpx_imported = _probe(serve(), KEY)
    assert state == "ours" and about["pid"] == 4242 and about["jobs"] == {"running": 1}
    assert not httpx_imported


def test_a_listener_without_the_key_or_relaying_another_address_is_refused(serve) -> None:  # type: ignore[no-untyped-def]
    assert _probe(serve(), "sk_other_key_0123456789")[:2] == ("refused", {})
    assert _probe(serve(address_in_proof="127.0.0.1:1"), KEY)[:2] == ("refused", {})


def test_nothing_listening_is_gone() -> None:
    import socket

    with socket.socket() as spare:  # a port nothing listens on once this closes
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]
    assert _probe(f"http://127.0.0.1:{port}", KEY)[:2] == ("gone", {})
