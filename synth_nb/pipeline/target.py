"""Where jobs go: the backend URL, the embedded local backend, and the one API-key rule.

The embedded backend is started by ``local_backend()`` only, on first use, and shared by everything that
runs in this process (every CLI command step, every notebook cell). Its own key always wins for it: a
``SYNTH_API_KEY`` from the environment, a ``.env`` file or the wizard is meant for the hosted backend
and would be refused with 401 there.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from synth_nb.backend import LOCAL, normalize_backend_url, resolve_backend
from synth_nb.errors import ConfigError, SecretsError
from synth_nb.secrets import SYNTH_API_KEY, SecretBundle, missing_keys_error

__all__ = [
    "EmbeddedBackend",
    "Target",
    "api_key",
    "local_backend",
    "resolve_target",
    "stop_local_backend",
    "use_local_backend",
]


class EmbeddedBackend(Protocol):
    """What the pipeline needs of ``synth_nb.local.LocalBackend``."""

    url: str
    api_key: str

    def stop(self) -> None: ...


@dataclass(frozen=True)
class Target:
    """A backend base URL (ending in ``/api``, or ``LOCAL`` before the embedded backend is started).

    ``own_key`` is set for the embedded backend: that key is sent, whatever ``SYNTH_API_KEY`` says.
    """

    url: str
    own_key: str | None = None

    @property
    def started(self) -> bool:
        """False for ``--backend local`` previewed without starting the embedded backend."""
        return self.url != LOCAL

    @property
    def is_embedded(self) -> bool:
        return self.own_key is not None or self.url == LOCAL

    def __repr__(self) -> str:  # never shows the key
        return f"Target(url={self.url!r}, embedded={self.is_embedded})"


_lock = threading.Lock()
_embedded: EmbeddedBackend | None = None


def local_backend() -> EmbeddedBackend:
    """The embedded backend for ``--backend local``: started on first use, then reused by this process."""
    global _embedded
    with _lock:
        if _embedded is None:
            try:
                from synth_nb.local import start_backend
            except ImportError as exc:  # pragma: no cover - depends on the installed extras
                raise ConfigError(f"--backend local needs the 'local' extra (pip install 'synth-nb[local]'): "
                                  f"{exc}") from None
            _embedded = start_backend(port=0)
        return _embedded


def use_local_backend(backend: EmbeddedBackend) -> None:
    """Make an already running backend the one ``--backend local`` uses in this process.

    For backends started with options, e.g. ``start_backend(default_executor="replay")`` for demos.
    """
    global _embedded
    with _lock:
        _embedded = backend


def stop_local_backend() -> None:
    """Stop the embedded backend if this process started or adopted one (extension unload, CLI exit)."""
    global _embedded
    with _lock:
        backend, _embedded = _embedded, None
    if backend is not None:
        backend.stop()


def resolve_target(backend: str | None, *, start_local: bool = True,
                   environ: Mapping[str, str] | None = None) -> Target:
    """``--backend`` (or ``SYNTH_BACKEND_OVERRIDE``, or the hosted default) as a ``Target``.

    ``local`` starts the embedded backend unless ``start_local`` is False (a CLI dry run shows ``local``
    and starts nothing). A URL that is the running embedded backend's own gets its key too, so jobs
    re-attached from the registry keep working.
    """
    url = resolve_backend(backend, environ)
    if url == LOCAL:
        if not start_local:
            return Target(LOCAL)
        embedded = local_backend()
        return Target(normalize_backend_url(embedded.url), embedded.api_key)
    running = _embedded
    if running is not None and normalize_backend_url(running.url) == url:
        return Target(url, running.api_key)
    return Target(url)


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
