"""A body refused before it was read to its end (413 past the limit, 401 without a key) is answered first, and
the client reads that answer: the server half-closes the connection after it and reads and drops the rest
of the body, up to a bound (``DRAIN_BYTES``), instead of closing with the body unread, which would reset the
connection under the answer. Past the bound it stops reading. Driven over a real socket against a real
server, counting how much of the body it took."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from synth_nb.local import start_backend
from synth_nb.local.connections import DRAIN_BYTES

CHUNK = 64 * 1024
#: socket buffers on both sides: what a client may still push out once the server stopped reading
BUFFERS = 48 * 1024 * 1024


@pytest.fixture(scope="module")
def backend() -> Iterator[Any]:
    with start_backend(port=0) as running:
        yield running


def _send_chunked(url: str, head: str, total: int) -> tuple[int, bytes]:
    """Send ``head`` then up to ``total`` bytes of chunked body; how much went out before the server stopped
    taking it, and what it answered (read once the sending is over, as most clients read it)."""
    host, port = url.removeprefix("http://").split(":")
    frame = f"{CHUNK:x}\r\n".encode() + b"x" * CHUNK + b"\r\n"
    sent, answer = 0, b""
    with socket.create_connection((host, int(port)), timeout=120) as sock:
        sock.sendall(head.encode())
        try:
            while sent < total:
                sock.sendall(frame)
                sent += CHUNK
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            answer = sock.recv(4096)
        except OSError:
            answer = b""
    return sent, answer


def _head(path: str, *headers: str) -> str:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
             "Transfer-Encoding: chunked", *headers]
    return "\r\n".join(lines) + "\r\n\r\n"


def test_a_refused_rollout_body_is_answered_and_the_client_reads_the_413(backend: Any) -> None:
    sent, answer = _send_chunked(backend.url, _head("/task-apps/banking/rollout", f"X-API-Key: {backend.task_app_key}"),
                                 64 * 1024 * 1024)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert sent == 64 * 1024 * 1024  # read and dropped to its end: the answer was not reset away


def test_a_refused_job_body_is_answered_and_the_client_reads_the_413(backend: Any) -> None:
    sent, answer = _send_chunked(backend.url, _head("/api/learning/jobs", f"Authorization: Bearer {backend.api_key}"),
                                 64 * 1024 * 1024)
    assert answer.startswith(b"HTTP/1.1 413") and b"larger than the" in answer, answer[:200]


def test_past_the_drain_bound_the_server_stops_reading_a_refused_body(backend: Any) -> None:
    total = DRAIN_BYTES + 4 * BUFFERS
    sent, answer = _send_chunked(backend.url, _head("/api/learning/jobs"), total)
    assert sent < DRAIN_BYTES + BUFFERS, f"the server read {sent // 2**20} MiB of a refused body"
    assert answer.startswith(b"HTTP/1.1 401") or answer == b""  # read before the reset, where the client could
