"""``synth-nb backend --stop`` signals only a process proven to be the folder's backend.

The backend.json a killed backend left behind names a pid and a port. Since then the pid may have gone to
another process (here: a harmless ``sleep`` of this test whose command line mentions synth_nb, as a user's
own script might) and the port to another program (here: a socket that accepts and never answers). Neither
is signalled and the stale file is removed; a hung backend, which is the very process the file names, is
still stopped. Every process a test starts is stopped by its pid in the teardown.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from synth_nb.cli.backend import main as backend_main
from synth_nb.local.backend_info import INFO_FILE, read_info
from synth_nb.local.processes import pid_alive
from synth_nb.local.shared import ensure_backend, stop_backend

#: what a script of the user's might be: long-lived, its command line naming synth_nb
LOOKALIKE = [sys.executable, "-c", "import time; time.sleep(600)", "--", "python -m synth_nb.cli.backend"]


@pytest.fixture
def lookalike() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(LOOKALIKE, start_new_session=True)
    yield process
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port whose listener takes connections and never answers (a backlog nobody reads)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield int(sock.getsockname()[1])


def _stale_file(folder: Path, pid: int, port: int, *, process_start: str | None) -> Path:
    """backend.json as a backend killed without cleaning up left it, naming ``pid`` and ``port``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "api_key").write_text("sk_local_" + "0" * 48 + "\n")
    doc = {"url": f"http://127.0.0.1:{port}", "pid": pid, "started_at": "2026-01-01T00:00:00+00:00", "version": "0",
           "data_dir": str(folder)}
    if process_start is not None:
        doc["process_start"] = process_start
    (folder / INFO_FILE).write_text(json.dumps(doc))
    return folder


def _boot() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def test_a_reused_pid_behind_a_silent_listener_is_not_signalled(tmp_path: Path, lookalike: subprocess.Popen[bytes],
                                                                silent_port: int,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # the backend that wrote the file started at tick 1 of this boot; the pid is now the lookalike's
    folder = _stale_file(tmp_path / "backend", lookalike.pid, silent_port, process_start=f"{_boot()}:1")
    assert backend_main(["--stop", "--data-dir", str(folder)]) == 1
    assert "no embedded backend is running" in capsys.readouterr().out
    assert pid_alive(lookalike.pid) and lookalike.poll() is None
    assert not (folder / INFO_FILE).exists()  # stale: removed


def test_a_file_without_the_start_time_naming_a_silent_lookalike_is_refused_not_signalled(
        tmp_path: Path, lookalike: subprocess.Popen[bytes], silent_port: int,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = _stale_file(tmp_path / "backend", lookalike.pid, silent_port, process_start=None)  # an older file
    assert backend_main(["--stop", "--data-dir", str(folder)]) == 1
    err = capsys.readouterr().err
    assert f"pid {lookalike.pid}" in err and "was not signalled" in err and f"kill {lookalike.pid}" in err
    assert pid_alive(lookalike.pid) and lookalike.poll() is None


def test_a_stale_file_whose_pid_is_free_is_removed_and_nothing_signalled(tmp_path: Path, silent_port: int) -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait(timeout=60)
    folder = _stale_file(tmp_path / "backend", ended.pid, silent_port, process_start=f"{_boot()}:1")
    assert stop_backend(folder) is None and not (folder / INFO_FILE).exists()


def test_a_hung_backend_is_still_stopped_it_is_the_process_the_file_names(tmp_path: Path) -> None:
    folder = tmp_path / "backend"
    backend = ensure_backend(folder)
    try:
        info = read_info(folder)
        assert info is not None and info.pid == backend.pid and info.process_start.startswith(_boot() + ":")
        os.kill(backend.pid, signal.SIGSTOP)  # it answers nothing now, not even the key proof
        stopped = stop_backend(folder, timeout=2)
        assert stopped is not None and stopped.pid == backend.pid
        deadline = time.monotonic() + 60
        while pid_alive(backend.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not pid_alive(backend.pid) and not (folder / INFO_FILE).exists()
    finally:
        if pid_alive(backend.pid):
            os.kill(backend.pid, signal.SIGKILL)
