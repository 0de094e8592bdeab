"""The embedded backend under clients that hold connections: 400 sockets sending their headers one byte at a
time (the server's descriptors, and how long until it let go of all of them), and refused bodies (how long
the server spends reading and dropping one before its connection ends).

Run: ``python benchmarks/connections.py`` (Linux: descriptors are counted in /proc).
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

SERVE = ("import time; from synth_nb.local import start_backend; b = start_backend(port=0); "
         "print(b.url, flush=True); time.sleep(3600)")
SLOW = 400
CHUNK = 64 * 1024


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def slow_headers(url: str, pid: int) -> None:
    host, port = url.removeprefix("http://").split(":")
    baseline = _fds(pid)
    sockets = [socket.create_connection((host, int(port)), timeout=30) for _ in range(SLOW)]
    held = set(range(SLOW))
    started, peak, sent = time.monotonic(), 0, 0
    while held and time.monotonic() - started < 120:
        for index in list(held):
            poll = select.poll()
            poll.register(sockets[index], select.POLLIN)
            if poll.poll(0):
                held.discard(index)
                continue
            try:
                sockets[index].send(b"GET / HTTP/1.1\r\nX-Slow: aaaaaaaa"[sent % 30:sent % 30 + 1])
            except OSError:
                held.discard(index)
        sent += 1
        peak = max(peak, _fds(pid))
        time.sleep(0.25)
    print(f"{SLOW} sockets, one header byte each every 0.25 s: server descriptors {baseline} before, peak {peak}; "
          f"all let go after {time.monotonic() - started:.1f} s ({len(held)} still held)")
    for sock in sockets:
        sock.close()


def refused_body(url: str, pid: int, megabytes: int) -> None:
    host, port = url.removeprefix("http://").split(":")
    frame = f"{CHUNK:x}\r\n".encode() + b"x" * CHUNK + b"\r\n"
    cpu, started, sent = _cpu(pid), time.monotonic(), 0
    with socket.create_connection((host, int(port)), timeout=120) as sock:
        sock.sendall(b"POST /api/learning/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        try:
            while sent < megabytes * 2**20:
                sock.sendall(frame)
                sent += CHUNK
        except OSError:
            pass
        answer = sock.recv(64)
    print(f"refused {megabytes} MiB body (401): {sent / 2**20:.0f} MiB taken in {time.monotonic() - started:.2f} s, "
          f"server CPU {_cpu(pid) - cpu:.2f} s; the client read {answer.split(b' ')[1].decode() or 'nothing'}")


def main() -> None:
    process = subprocess.Popen([sys.executable, "-c", SERVE], stdout=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        slow_headers(url, process.pid)
        for megabytes in (64, 600):
            refused_body(url, process.pid, megabytes)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()


if __name__ == "__main__":
    main()
