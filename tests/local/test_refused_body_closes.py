"""A body refused before it was read to its end (413 past the limit, 401 without a key) closes the connection:
the server does not go on reading and discarding the rest of a 300 MiB chunked body. Driven over a real
socket against a real server, counting how much of the body it took."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from synth_nb.local import start_backend

TOTAL = 300 * 1024 * 1024
CHUNK = 64 * 1024
#: the 4 MiB task-app limit, the job-body limit, socket buffers on both sides: far below the whole body
READ_AT_MOST = 48 * 1024 * 1024


@pytest.fixture(scope="module")
def backend() -> Iterator[Any]:
    with start_backend(port=0) as running:
        yield running


def _send_chunked(url: str, head: str) -> tuple[int, bytes]:
    """Send ``head`` then up to TOTAL bytes of chunked body; how much went out before the server closed,
    and what it answered."""
    host, port = url.removeprefix("http://").split(":")
    frame = f"{CHUNK:x}\r\n".encode() + b"x" * CHUNK + b"\r\n"
    sent, answer = 0, b""
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(head.encode())
        try:
            while sent < TOTAL:
                sock.sendall(frame)
                sent += CHUNK
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            sock.settimeout(60)
            answer = sock.recv(4096)
        except OSError:
            answer = b""
    return sent, answer


def _head(path: str, *headers: str) -> str:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
             "Transfer-Encoding: chunked", *headers]
    return "\r\n".join(lines) + "\r\n\r\n"


def test_a_huge_chunked_rollout_body_is_cut_after_the_limit(backend: Any) -> None:
    sent, _ = _send_chunked(backend.url, _head("/task-apps/banking/rollout", f"X-API-Key: {backend.task_app_key}"))
    assert sent < READ_AT_MOST, f"the server read {sent // 2**20} MiB of a refused body"


def test_a_huge_chunked_job_body_is_cut_after_the_limit(backend: Any) -> None:
    sent, _ = _send_chunked(backend.url, _head("/api/learning/jobs", f"Authorization: Bearer {backend.api_key}"))
    assert sent < READ_AT_MOST


def test_a_huge_chunked_body_without_a_key_is_cut_at_once(backend: Any) -> None:
    sent, answer = _send_chunked(backend.url, _head("/api/learning/jobs"))
    assert sent < READ_AT_MOST
    assert answer.startswith(b"HTTP/1.1 401") or answer == b""
