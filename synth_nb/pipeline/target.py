"""Where jobs go: the backend URL, the embedded local backend, and the one API-key rule.

``--backend local`` means the embedded backend of the data folder (``SYNTH_NB_BACKEND_DIR``, else
``.synth_nb/backend`` in the working folder): a process of its own, started on first use and found again
by later kernels and commands, so jobs outlive a kernel restart (``synth-nb backend --status`` /
``--stop``). Tests and demos may instead hand over a backend they started in this process
(``use_local_backend``). Its own key always wins for it: a ``SYNTH_API_KEY`` from the environment, a
``.env`` file or the wizard is meant for the hosted backend and would be refused with 401 there.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from synth_nb.backend import LOCAL, display_url, normalize_backend_url, resolve_backend
from synth_nb.errors import ConfigError, SecretsError
from synth_nb.secrets import SYNTH_API_KEY, missing_keys_error

if TYPE_CHECKING:
    from synth_nb.job.registry import JobRegistry
    from synth_nb.secrets import SecretBundle

__all__ = [
    "EmbeddedBackend",
    "Target",
    "api_key",
    "attach_target",
    "local_backend",
    "resolve_target",
    "running_local_target",
    "stop_local_backend",
    "use_local_backend",
]


class EmbeddedBackend(Protocol):
    """What the pipeline needs of an embedded backend (``synth_nb.local``'s in-process or shared one)."""

    @property
    def url(self) -> str: ...

    @property
    def api_key(self) -> str: ...

    @property
    def task_app_key(self) -> str | None: ...

    def task_app_url(self, name: str) -> str: ...

    def stop(self) -> None: ...


@dataclass(frozen=True)
class Target:
    """A backend base URL (ending in ``/api``, or ``LOCAL`` before the embedded backend is started).

    ``own_key`` is set for the embedded backend: that key is sent, whatever ``SYNTH_API_KEY`` says.
    ``task_app_key`` is the key of the example task apps it serves, used when no ENVIRONMENT_API_KEY is.
    """

    url: str
    own_key: str | None = None
    task_app_key: str | None = None

    @property
    def started(self) -> bool:
        """False for ``--backend local`` previewed without starting the embedded backend."""
        return self.url != LOCAL

    @property
    def is_embedded(self) -> bool:
        return self.own_key is not None or self.url == LOCAL

    def __repr__(self) -> str:  # never shows the keys
        return f"Target(url={display_url(self.url)!r}, embedded={self.is_embedded})"


_lock = threading.Lock()
#: a backend this process started itself and handed over (tests, demos); it wins over the shared one
_adopted: EmbeddedBackend | None = None
#: URLs already stated in this process
_announced: set[str] = set()


def _needs_local_extra() -> None:
    missing = [name for name in ("starlette", "uvicorn") if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(f"--backend local needs the 'local' extra (pip install 'synth-nb[local]'); "
                          f"missing: {', '.join(missing)}", key="backend")


def local_backend(say: Callable[[str], None] = print) -> EmbeddedBackend:
    """The embedded backend for ``--backend local``: the one handed over, else the data folder's process.

    That process is started on first use and keeps running after this kernel or command ends; its URL and
    data folder are stated once per process (to ``say``: a door's own, the process's stdout for a library
    caller). The folder comes from this process's environment and working folder, like everything else the
    process keeps on disk.
    """
    with _lock:
        if _adopted is not None:
            return _adopted
    _needs_local_extra()
    # the embedded backend's modules (measured: 11 ms) load only when it is asked for, as in every function here
    from synth_nb.local.errors import SharedBackendError
    from synth_nb.local.shared import default_data_dir, ensure_backend

    folder = default_data_dir()
    try:
        backend = ensure_backend(folder)
    except SharedBackendError as exc:
        raise ConfigError(str(exc), key="backend") from None
    with _lock:
        first = backend.url not in _announced
        _announced.add(backend.url)
    if first:
        lasts = "; it keeps running in the background (synth-nb backend --stop stops it)" if backend.started else ""
        say(f"embedded backend on {backend.url} (data in {folder}){lasts}")
    return backend


def use_local_backend(backend: EmbeddedBackend) -> None:
    """Make a backend running in this process the one ``--backend local`` uses, instead of the shared one.

    For backends started with options, e.g. ``start_backend(default_executor="replay")`` for demos.
    """
    global _adopted
    with _lock:
        _adopted = backend


def stop_local_backend() -> None:
    """Stop the backend handed over with ``use_local_backend`` (extension unload, end of a test).

    The shared backend process keeps running: other kernels and commands may use it.
    """
    global _adopted
    with _lock:
        backend, _adopted = _adopted, None
        _announced.clear()
    if backend is not None:
        backend.stop()


def _target_of(backend: EmbeddedBackend) -> Target:
    return Target(normalize_backend_url(backend.url), backend.api_key, backend.task_app_key)


def _embedded_at(url: str) -> EmbeddedBackend | None:
    """The handed-over backend or the data folder's process, if it is the one serving ``url``."""
    adopted = _adopted
    if adopted is not None and normalize_backend_url(adopted.url) == url:
        return adopted
    if urlsplit(url).hostname not in ("127.0.0.1", "localhost"):
        return None
    from synth_nb.local.backend_info import read_info
    from synth_nb.local.errors import SharedBackendError
    from synth_nb.local.shared import default_data_dir, find_backend

    folder = default_data_dir()
    info = read_info(folder)
    if info is None or normalize_backend_url(info.url) != url:
        return None
    try:
        return find_backend(folder)
    except SharedBackendError:
        return None


def running_local_target() -> Target | None:
    """The embedded backend running now (handed over, or the data folder's process), without starting one."""
    adopted = _adopted
    if adopted is not None:
        return _target_of(adopted)
    from synth_nb.local.errors import SharedBackendError
    from synth_nb.local.shared import default_data_dir, find_backend

    try:
        running = find_backend(default_data_dir())
    except SharedBackendError:
        return None
    return _target_of(running) if running is not None else None


def resolve_target(backend: str | None, *, start_local: bool = True, environ: Mapping[str, str] | None = None,
                   say: Callable[[str], None] = print) -> Target:
    """``--backend`` (or ``SYNTH_BACKEND_OVERRIDE``, or the hosted default) as a ``Target``.

    ``local`` starts (or finds) the embedded backend unless ``start_local`` is False (a CLI dry run shows
    ``local`` and starts nothing); ``say`` gets where it is. A URL that is the embedded backend's own gets its
    key too, so jobs re-attached from the registry, even from a new kernel, keep working.
    """
    url = resolve_backend(backend, environ)
    if url == LOCAL:
        return _target_of(local_backend(say)) if start_local else Target(LOCAL)
    running = _embedded_at(url)
    return _target_of(running) if running is not None else Target(url)


def api_key(target: Target, bundles: Iterable[SecretBundle | None]) -> str:
    """The key sent to ``target``: the embedded backend's own, else the one ``SYNTH_API_KEY`` of the bundles."""
    if target.own_key:
        return target.own_key
    keys = {b.secret_value(SYNTH_API_KEY) or "" for b in bundles if b is not None} - {""}
    if len(keys) > 1:
        raise SecretsError("the configs resolve different SYNTH_API_KEY values (different .env files); "
                           "submit them one at a time")
    if not keys:
        raise missing_keys_error([SYNTH_API_KEY])
    return keys.pop()


def attach_target(job_id: str, backend: str | None, registry: JobRegistry, *, start_local: bool = True,
                  say: Callable[[str], None] = print) -> Target:
    """Where a job lives: ``--backend``, else the backend it was submitted to (registry), else the default.

    A job sent to the embedded backend stays in its data folder when the process stops: if nothing answers
    at the URL it was sent to any more, the data folder's backend is found (or started) again, on whatever
    port it has.

    A job this folder never sent, with no backend named (``--backend`` or ``SYNTH_BACKEND_OVERRIDE``), is a
    ``ConfigError``: asking the hosted default would only answer with a network error about somewhere else.
    """
    if backend:
        return resolve_target(backend, start_local=start_local, say=say)
    record = registry.get(job_id)
    if record is None and not os.environ.get("SYNTH_BACKEND_OVERRIDE", "").strip():
        raise ConfigError(f"job {job_id} is not in this folder's jobs ({registry.folder})", key="backend",
                          hint="`synth-nb jobs` lists them; for a job sent from elsewhere pass --backend URL")
    target = resolve_target(record.backend_url if record is not None else None, start_local=start_local, say=say)
    if record is not None and record.embedded and not target.is_embedded and not _answers(target.url):
        return resolve_target(LOCAL, say=say)
    return target


def _answers(url: str) -> bool:
    """Whether a server answers at ``url`` at all (any HTTP status counts): one GET of its ``/health``."""
    from http.client import HTTPException

    from synth_nb.local.probe import probe_get

    try:
        probe_get(url.rstrip("/") + "/health", timeout=5.0)
    except (OSError, HTTPException):
        return False
    return True
