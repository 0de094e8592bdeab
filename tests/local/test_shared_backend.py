"""The embedded backend as a process of its own, found again through its data folder's info file.

It is started once, reused by later processes, outlives the process (and the Ctrl-C) that started it, and
a stale info file is replaced without any other process being signalled. Every test stops what it
started, by pid, in its teardown.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from synth_nb.local.backend_info import INFO_FILE, read_info
from synth_nb.local.shared import ensure_backend, find_backend, stop_backend

STARTER = ("import sys; from pathlib import Path; from synth_nb.local.shared import ensure_backend; "
           "b = ensure_backend(Path(sys.argv[1])); print(b.pid, b.started, b.url, flush=True)")


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    data = tmp_path / "backend"
    yield data
    stop_backend(data)


def _mode(path: Path) -> str:
    return oct(path.stat().st_mode & 0o777)


def _start_elsewhere(folder: Path) -> tuple[int, bool, str]:
    """``ensure_backend`` in a separate Python process, which then exits."""
    out = subprocess.run([sys.executable, "-c", STARTER, str(folder)], capture_output=True, text=True,
                         check=True, timeout=300).stdout.split()
    return int(out[0]), out[1] == "True", out[2]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rpartition(")")[2].split()[0] != "Z"


def test_the_info_file_says_where_the_backend_listens_and_is_private(folder: Path) -> None:
    backend = ensure_backend(folder)
    assert backend.started
    doc = json.loads((folder / INFO_FILE).read_text())
    assert doc["url"] == backend.url and doc["pid"] == backend.pid and doc["pid"] != os.getpid()
    assert doc["version"] and doc["started_at"] and Path(doc["data_dir"]) == folder.resolve()
    for name in (INFO_FILE, "api_key", "task_app_key", "backend.log"):
        assert _mode(folder / name) == "0o600", name
    assert backend.api_key == (folder / "api_key").read_text().strip()
    assert backend.api_key not in repr(backend) and str(backend.task_app_key) not in repr(backend)
    health = httpx.get(backend.url + "/api/health", headers={"Authorization": f"Bearer {backend.api_key}"})
    assert health.status_code == 200
    assert httpx.get(backend.url + "/api/health").status_code == 401  # the folder's key is needed


def test_a_second_process_reuses_the_backend_which_outlives_the_first(folder: Path) -> None:
    pid, started, url = _start_elsewhere(folder)
    assert started and _alive(pid)  # the starter has exited; the backend has not
    again_pid, again_started, again_url = _start_elsewhere(folder)
    assert (again_pid, again_started, again_url) == (pid, False, url)
    here = ensure_backend(folder)
    assert (here.pid, here.started, here.url) == (pid, False, url)
    assert os.getsid(pid) == pid  # a session of its own: no terminal's Ctrl-C or kernel's group reaches it


def test_a_ctrl_c_to_the_starters_process_group_leaves_the_backend_running(folder: Path) -> None:
    code = STARTER + "; import time; time.sleep(600)"
    starter = subprocess.Popen([sys.executable, "-c", code, str(folder)], stdout=subprocess.PIPE, text=True,
                               start_new_session=True)  # the starter's group stands for a terminal's
    try:
        assert starter.stdout is not None
        pid = int(starter.stdout.readline().split()[0])
        os.killpg(starter.pid, signal.SIGINT)
        starter.wait(timeout=60)
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait()
    found = find_backend(folder)
    assert found is not None and found.pid == pid


def test_a_stale_info_file_is_replaced_and_its_pid_never_signalled(folder: Path) -> None:
    first = ensure_backend(folder)
    os.kill(first.pid, signal.SIGKILL)  # died without removing its info file
    deadline = time.monotonic() + 60
    while _alive(first.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert read_info(folder) is not None and read_info(folder).pid == first.pid  # type: ignore[union-attr]
    second = ensure_backend(folder)
    assert second.started and second.pid != first.pid and read_info(folder).pid == second.pid  # type: ignore[union-attr]
    stop_backend(folder)
    # a file naming a live process that is not a backend (this test) is stale: removed, nothing signalled
    (folder / INFO_FILE).write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": os.getpid(),
                                                "started_at": "2026-01-01T00:00:00+00:00", "version": "0",
                                                "data_dir": str(folder)}))
    assert find_backend(folder) is None and not (folder / INFO_FILE).exists()
    (folder / INFO_FILE).write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": os.getpid(),
                                                "started_at": "2026-01-01T00:00:00+00:00", "version": "0",
                                                "data_dir": str(folder)}))
    assert stop_backend(folder) is None and not (folder / INFO_FILE).exists()  # and this process lives on


def test_stopping_ends_the_process_and_removes_the_info_file(folder: Path) -> None:
    backend = ensure_backend(folder)
    stopped = stop_backend(folder)
    assert stopped is not None and stopped.pid == backend.pid
    assert not _alive(backend.pid) and not (folder / INFO_FILE).exists()
    assert find_backend(folder) is None and stop_backend(folder) is None


def test_a_backend_whose_data_folder_was_deleted_stops_by_itself(folder: Path) -> None:
    backend = ensure_backend(folder)
    shutil.rmtree(folder, ignore_errors=True)
    deadline = time.monotonic() + 120  # it checks every few seconds; a loaded machine may be slow to notice
    while _alive(backend.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(backend.pid), "the backend kept running without its data folder"
