"""One embedded backend process per data folder, shared by every kernel and command that uses it.

Found again the way ``%tensorboard`` finds its server: once it listens, the process writes
``<data folder>/backend.json`` (url, pid, the pid's start time, started_at, version; 0600) and it removes
the file when it stops. A later kernel or command reads the file, checks that the process is alive and is the one the file
names, and reuses it. The listener must first prove it holds the folder's ``api_key`` without receiving it
(``GET /local-backend/proof`` answers an HMAC of a random nonce), and only then is the key sent (``GET
/api/v1/local-backend`` answers its pid): a file left by a backend killed without cleaning up may name a
port another program listens on now. A stale file is removed and the folder's keys are replaced (an older
client may have sent them there), under the start lock, so a backend being started keeps its key. The process runs in a session of its own, so neither a kernel restart
nor a Ctrl-C in a terminal stops it; ``stop_backend`` (``synth-nb backend --stop``) does, and signals a pid
only when it is proven to be the folder's backend: it answers the key proof with that pid, or it is the very
process the file names (its start time, read from ``/proc``, is the one recorded). A pid given since to
another process, or a listener that took the old port, is never signalled.

What the file says, and whether its pid is still the process that wrote it, is ``synth_nb.local.backend_info``'s;
how a listener proves it holds the folder's key without receiving it is ``synth_nb.local.backend_proof``'s.

Nothing heavy is imported here: kernels call it before anything tells whether the ``local`` extra is
installed (the started process needs it).
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

from synth_nb.local.backend_info import INFO_FILE, BackendInfo, read_info, remove_info, same_process
from synth_nb.local.backend_proof import SERVICE, describe_backend
from synth_nb.local.errors import DataFolderError, SharedBackendError
from synth_nb.local.examples import task_app_path
from synth_nb.local.key_files import API_KEY_FILE, TASK_APP_KEY_FILE, read_key, rotate_keys
from synth_nb.local.processes import pid_alive, runs_synth_nb

__all__ = [
    "DIR_VARIABLE",
    "LOG_FILE",
    "SERVICE",
    "SharedBackend",
    "default_data_dir",
    "describe_backend",
    "abandon_background_start",
    "ensure_backend",
    "find_backend",
    "start_in_background",
    "stop_backend",
]

DIR_VARIABLE = "SYNTH_NB_BACKEND_DIR"
LOG_FILE = "backend.log"
_START_LOCK = "start.lock"
#: a loaded two-core machine may take this long to import the server and open its database
START_TIMEOUT = 180.0
STOP_TIMEOUT = 30.0
#: how often a starting backend is looked for (a file read until it listens): a start takes about a second
_READY_POLL = 0.02
#: starts begun by ``start_in_background``, by data folder, until ``ensure_backend`` takes them
_HEAD_STARTS: dict[Path, _HeadStart] = {}
_HEAD_STARTS_LOCK = threading.Lock()
#: less free space than this and a starting backend cannot write its database or its log
_ROOM_NEEDED = 1024 * 1024
#: not passed on to a started process: the keys a client resolved reach it through ``POST /env-keys``
_WITHHELD = ("SYNTH_API_KEY", "ENVIRONMENT_API_KEY")
#: the folder holding the ``synth_nb`` package, so the started process runs this very code
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def default_data_dir(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path:
    """``SYNTH_NB_BACKEND_DIR``, else ``.synth_nb/backend`` in the working (notebook) folder."""
    given = (os.environ if environ is None else environ).get(DIR_VARIABLE, "").strip()
    folder = Path(given).expanduser() if given else (cwd or Path.cwd()) / ".synth_nb" / "backend"
    return folder.resolve()


def _may_be_ours(info: BackendInfo) -> bool:
    """Whether a pid that does not answer the key proof may still be the folder's backend (hung, busy): it is
    the very process that wrote the file, or, for a file without its start time, it runs synth_nb."""
    same = same_process(info)
    return same if same is not None else runs_synth_nb(info.pid)


class SharedBackend:
    """The backend process serving a data folder: ``url`` (no ``/api``), ``api_key``, ``pid``, ``stop()``.

    ``started`` tells whether this call started it; ``task_app_key`` is the key of the bundled example
    task apps it serves (``task_app_url(name)``).
    """

    def __init__(self, info: BackendInfo, api_key: str, task_app_key: str | None, *, started: bool) -> None:
        self.info = info
        self.url = info.url
        self.pid = info.pid
        self.data_dir = Path(info.data_dir)
        self.api_key = api_key
        self.task_app_key = task_app_key
        self.started = started

    def task_app_url(self, name: str) -> str:
        return self.url + task_app_path(name)

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the process (every kernel and command using it loses it); its jobs end failed."""
        stop_backend(self.data_dir, timeout=timeout)

    def __repr__(self) -> str:  # never shows the keys
        return f"SharedBackend(url={self.url!r}, pid={self.pid}, data_dir={str(self.data_dir)!r})"


def _not_answering(info: BackendInfo, state: str) -> SharedBackendError:
    why = "does not answer" if state == "busy" else "refuses the key in its api_key file"
    return SharedBackendError(f"the embedded backend for {info.data_dir} (pid {info.pid}, {info.url}) {why}; "
                              f"stop it with: synth-nb backend --stop --data-dir {info.data_dir}")


def _look(folder: Path) -> tuple[SharedBackend | None, BackendInfo | None]:
    """``(the live backend of folder, None)``, or ``(None, the stale info file naming none)``."""
    info = read_info(folder)
    if info is None:
        return None, None
    key = read_key(folder / API_KEY_FILE)
    if key and pid_alive(info.pid) and same_process(info) is not False:
        state, about = describe_backend(info.url, key)
        if state == "ours" and about.get("pid") == info.pid:
            return SharedBackend(info, key, read_key(folder / TASK_APP_KEY_FILE), started=False), None
        if state in ("busy", "refused") and _may_be_ours(info):
            raise _not_answering(info, state)
    return None, info


def _retire(folder: Path, stale: BackendInfo) -> None:
    """Remove a stale info file and replace the folder's keys (call under the start lock)."""
    if read_info(folder) == stale:
        try:
            (folder / INFO_FILE).unlink(missing_ok=True)
            rotate_keys(folder)
        except OSError as exc:
            raise DataFolderError.of(folder, exc) from None


def find_backend(data_dir: Path) -> SharedBackend | None:
    """The live backend process of ``data_dir``, else None (a stale info file is removed, the keys replaced)."""
    folder = Path(data_dir).resolve()
    found, stale = _look(folder)
    if stale is not None:
        with _start_lock(folder):
            _retire(folder, stale)
    return found


@contextmanager
def _start_lock(folder: Path) -> Iterator[None]:
    """One starter at a time per folder, across processes (two kernels opening at once start one backend)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle = open(folder / _START_LOCK, "w")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise DataFolderError.of(folder, exc) from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _log_tail(path: Path, lines: int = 12) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _disk_full(folder: Path) -> bool:
    """Whether the file system of ``folder`` has (next to) no room left for a database page or a log line."""
    try:
        return shutil.disk_usage(folder).free < _ROOM_NEEDED
    except OSError:
        return False


def _spawn(folder: Path, options: tuple[str, ...]) -> subprocess.Popen[bytes]:
    """``synth-nb backend --data-dir FOLDER --port 0`` in a session of its own, logging to a file.

    It runs as ``python -m synth_nb.cli.backend``: that command alone, whatever the others import.
    """
    env = {k: v for k, v in os.environ.items() if k not in _WITHHELD}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_PACKAGE_ROOT), env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    command = [sys.executable, "-m", "synth_nb.cli.backend", "--data-dir", str(folder), "--port", "0", *options]
    fd = os.open(folder / LOG_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as log:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   cwd=folder, env=env, start_new_session=True, close_fds=True)
    # reaped as soon as it exits, so it never lingers as a zombie that looks alive to ``--stop``
    threading.Thread(target=process.wait, name="synth-nb-backend-reaper", daemon=True).start()
    return process


def _start(folder: Path, options: tuple[str, ...], timeout: float) -> SharedBackend:
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        process = _spawn(folder, options)
    except OSError as exc:
        raise DataFolderError.of(folder, exc) from None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = _log_tail(folder / LOG_FILE)
            if not tail.strip() and _disk_full(folder):  # it could not even write its log
                raise DataFolderError.of(folder, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
            raise SharedBackendError(f"the embedded backend for {folder} exited (code {process.returncode}) "
                                     f"before it listened; its log ({folder / LOG_FILE}) ends:\n{tail}")
        info = read_info(folder)
        key = read_key(folder / API_KEY_FILE)
        if info is not None and info.pid == process.pid and key:
            state, about = describe_backend(info.url, key)
            if state == "ours" and about.get("pid") == process.pid:
                return SharedBackend(info, key, read_key(folder / TASK_APP_KEY_FILE), started=True)
        time.sleep(_READY_POLL)
    process.terminate()
    raise SharedBackendError(f"the embedded backend for {folder} did not start within {timeout:.0f} s; "
                             f"see its log: {folder / LOG_FILE}")


def ensure_backend(data_dir: Path, *, options: tuple[str, ...] = (), timeout: float = START_TIMEOUT) -> SharedBackend:
    """The backend process of ``data_dir``: the running one, else a new one (``options`` go to its command).

    A start this process began earlier (``start_in_background``) is waited for and its backend returned (its
    ``started`` says so); if it failed, this call tries again and says its own error."""
    folder = Path(data_dir).resolve()
    with _HEAD_STARTS_LOCK:
        head_start = _HEAD_STARTS.pop(folder, None)
    if head_start is not None and head_start.done.wait(timeout) and head_start.backend is not None:
        return head_start.backend
    return _ensure(folder, options, timeout)


class _HeadStart:
    """A start running on a thread of its own: ``done`` is set once ``backend`` is known (None: it failed)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.backend: SharedBackend | None = None


def start_in_background(data_dir: Path) -> None:
    """Begin ``ensure_backend(data_dir)`` on a thread now, for a command that will ask for it after its own
    start-up: the backend process imports and opens its database while the command imports and reads its
    configs (each about half a second), instead of after. The next ``ensure_backend`` of the folder takes
    the result; ``abandon_background_start`` stops a backend it started that nothing asked for."""
    folder = Path(data_dir).resolve()
    head_start = _HeadStart()
    with _HEAD_STARTS_LOCK:
        if folder in _HEAD_STARTS:
            return
        _HEAD_STARTS[folder] = head_start

    def start() -> None:
        try:
            head_start.backend = _ensure(folder, (), START_TIMEOUT)
        except Exception:  # noqa: S110 - said by the ensure_backend that takes it, which tries again
            pass
        finally:
            head_start.done.set()

    threading.Thread(target=start, name="synth-nb-backend-head-start", daemon=True).start()


def abandon_background_start(data_dir: Path) -> None:
    """The command that began ``start_in_background`` ends without asking for the backend (a usage error):
    a backend that start launched is stopped, so bad input leaves nothing running."""
    folder = Path(data_dir).resolve()
    with _HEAD_STARTS_LOCK:
        head_start = _HEAD_STARTS.pop(folder, None)
    if (head_start is not None and head_start.done.wait(START_TIMEOUT) and head_start.backend is not None
            and head_start.backend.started):
        with suppress(SharedBackendError, DataFolderError, OSError):
                stop_backend(folder)


def _ensure(folder: Path, options: tuple[str, ...], timeout: float) -> SharedBackend:
    found = find_backend(folder)
    if found is not None:
        return found
    with _start_lock(folder):
        found, stale = _look(folder)
        if found is not None:
            return found
        if stale is not None:
            _retire(folder, stale)
        return _start(folder, options, timeout)


def _gone(info: BackendInfo) -> bool:
    """The process ``info`` names has ended (its pid is free, or now another process's)."""
    return not pid_alive(info.pid) or same_process(info) is False


def _wait_gone(info: BackendInfo, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not _gone(info):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _unproven(info: BackendInfo, state: str) -> SharedBackendError:
    why = "does not answer" if state == "busy" else "does not prove it holds the folder's key"
    return SharedBackendError(
        f"the process named in {Path(info.data_dir) / INFO_FILE} (pid {info.pid}, {info.url}) {why}, and that "
        f"file was written without the start time that would prove the pid is still the backend's: it was not "
        f"signalled. If it is the backend, stop it yourself (kill {info.pid}); then remove that file")


def stop_backend(data_dir: Path, *, timeout: float = STOP_TIMEOUT) -> BackendInfo | None:
    """Stop the backend process of ``data_dir`` (SIGTERM, then SIGKILL after ``timeout``); what it was, or None.

    A pid is signalled only when it is proven to be the folder's backend: it answers the key proof with that
    pid, or it is the very process that wrote the info file (the start time recorded there, a hung backend).
    A pid that is free or now another process's, whatever listens on the old port, leaves a stale file that
    is removed, nothing signalled. A file without the start time naming a live synth_nb process that does
    not answer raises ``SharedBackendError``: it cannot be told from a process given that pid since.
    """
    folder = Path(data_dir).resolve()
    info = read_info(folder)
    if info is None:
        return None
    proven = False
    if not _gone(info):
        key = read_key(folder / API_KEY_FILE)
        state, about = describe_backend(info.url, key) if key else ("refused", {})
        proven = (state == "ours" and about.get("pid") == info.pid) or same_process(info) is True
        if not proven and state in ("busy", "refused") and same_process(info) is None and runs_synth_nb(info.pid):
            raise _unproven(info, state)
    if not proven or _gone(info):
        with _start_lock(folder):
            _retire(folder, info)
        return None
    with suppress(ProcessLookupError):
        os.kill(info.pid, signal.SIGTERM)
        if not _wait_gone(info, timeout) and not _gone(info):
            os.kill(info.pid, signal.SIGKILL)  # still the same process (checked just now), never a newcomer
            _wait_gone(info, 10.0)
    remove_info(folder, info.pid)
    return info
