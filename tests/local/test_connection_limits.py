"""The embedded backend's connections, driven with raw sockets and real clients against the real server.

Sockets that send a request's headers one byte at a time are closed once the header timeout passes, and no
more than the connection cap are ever open, so the server's file descriptors stay bounded; a body over the
limit is answered with a 413 the client reads (synth-nb's own client, and ``requests`` as synth-ai 0.2.24
uploads with it) instead of a reset connection.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests

from synth_nb.client import AsyncSynthClient
from synth_nb.errors import SynthNbError
from synth_nb.local import start_backend
from synth_nb.local.connections import HEADER_TIMEOUT, MAX_CONNECTIONS

SERVE = ("import sys, time; from synth_nb.local import start_backend; b = start_backend(port=0); "
         "print(b.url, b.api_key, flush=True); time.sleep(3600)")
#: more sockets than the cap: the ones past it are refused at once, the rest time out
SLOW_CLIENTS = MAX_CONNECTIONS + 44
LIMIT = 1024 * 1024


@dataclass
class Served:
    url: str
    key: str
    pid: int

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))


@pytest.fixture
def served() -> Iterator[Served]:
    """A backend with its default limits, in a process of its own (its file descriptors can be counted)."""
    process = subprocess.Popen([sys.executable, "-c", SERVE], stdout=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        assert process.stdout is not None
        url, key = process.stdout.readline().split()
        yield Served(url, key, process.pid)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (end of stream, or a reset): readable without blocking."""
    poll = select.poll()  # not select(): this process may hold descriptors past FD_SETSIZE
    poll.register(sock, select.POLLIN)
    return bool(poll.poll(0))  # the end of the stream, a reset, or a 503 before them: either way, let go


def test_headers_sent_a_byte_at_a_time_are_cut_off_and_descriptors_stay_bounded(served: Served) -> None:
    host, port = served.url.removeprefix("http://").split(":")
    baseline = served.fds()
    head = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100_000
    sockets = [socket.create_connection((host, int(port)), timeout=30) for _ in range(SLOW_CLIENTS)]
    open_ = dict(enumerate(sockets))
    most, sent = 0, 0
    deadline = time.monotonic() + HEADER_TIMEOUT * 12  # generous: a loaded machine; the timeout alone decides
    try:
        while open_ and time.monotonic() < deadline:
            for index, sock in list(open_.items()):
                if _closed_by_server(sock):
                    del open_[index]
                    continue
                try:
                    sock.send(head[sent:sent + 1])
                except OSError:
                    del open_[index]
            sent += 1
            most = max(most, served.fds() - baseline)
            time.sleep(0.25)
        assert not open_, f"{len(open_)} sockets still held after {HEADER_TIMEOUT * 12:.0f} s of one byte at a time"
        assert most <= MAX_CONNECTIONS + 8, f"the server held {most} more descriptors than before"
    finally:
        for sock in sockets:
            sock.close()
    answer = httpx.get(served.url + "/api/health", headers={"Authorization": f"Bearer {served.key}"}, timeout=60)
    assert answer.status_code == 200  # still serving


def test_a_connection_past_the_cap_is_refused_with_a_503(served: Served) -> None:
    host, port = served.url.removeprefix("http://").split(":")
    held = [socket.create_connection((host, int(port)), timeout=30) for _ in range(MAX_CONNECTIONS)]
    try:
        deadline = time.monotonic() + 60
        answer = b""
        while not answer.startswith(b"HTTP/1.1 503") and time.monotonic() < deadline:
            with socket.create_connection((host, int(port)), timeout=30) as extra:
                answer = extra.recv(4096)
        assert answer.startswith(b"HTTP/1.1 503") and b"too many open connections" in answer
    finally:
        for sock in held:
            sock.close()


@pytest.fixture(scope="module")
def small_limits() -> Iterator[Any]:
    with start_backend(port=0, max_upload_bytes=LIMIT, max_json_bytes=LIMIT) as backend:
        yield backend


@pytest.mark.parametrize("megabytes", [8, 120])
def test_synth_nb_reads_the_413_of_a_body_over_the_limit(small_limits: Any, tmp_path: Path, megabytes: int) -> None:
    data = tmp_path / "train.jsonl"
    data.write_bytes(b'{"messages": []}\n' * (megabytes * 1024 * 1024 // 17))

    async def send() -> list[str]:
        said = []
        async with AsyncSynthClient(small_limits.url, small_limits.api_key) as client:
            for attempt in (client.upload_file(data), client.request_json("POST", "/learning/jobs",
                                                                          json={"x": "y" * megabytes * 1024 * 1024})):
                with pytest.raises(SynthNbError) as refused:
                    await attempt
                said.append(str(refused.value))
        return said

    upload, job = asyncio.run(send())
    assert "HTTP 413" in upload and f"larger than the {LIMIT + 64 * 1024}-byte limit" in upload, upload
    assert "HTTP 413" in job and f"larger than the {LIMIT}-byte limit" in job, job


def test_requests_as_synth_ai_uploads_reads_the_413(small_limits: Any, tmp_path: Path) -> None:
    body = b'{"messages": []}\n' * (40 * 1024 * 1024 // 17)
    answer = requests.post(small_limits.url + "/api/files", headers={"Authorization": f"Bearer {small_limits.api_key}"},
                           files={"file": ("train.jsonl", body, "application/jsonl")}, data={"purpose": "fine-tune"},
                           timeout=300)
    assert answer.status_code == 413 and "larger than the" in answer.json()["detail"]


def test_synth_nb_train_prints_the_size_error(small_limits: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from minimal_configs import MINIMAL_SFT

    from synth_nb.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYNTH_API_KEY", small_limits.api_key)
    line = b'{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n'
    (tmp_path / "train.jsonl").write_bytes(line * (8 * LIMIT // len(line)))
    (tmp_path / "sft.toml").write_text(MINIMAL_SFT)
    code = main(["train", "-c", "sft.toml", "--backend", small_limits.url])
    out, err = capsys.readouterr()
    assert code == 1 and "413" in err and "larger than the" in err, out + err
    assert "Traceback" not in err and "ReadError" not in err
