"""Which key the backend sends to a task app: the one handed over, else its own for its own example apps.

No synth-ai release uploads ``ENVIRONMENT_API_KEY`` during ``train`` (the hosted flow hands it over
beforehand), and a backend started in the background (``synth-nb backend --start``) is not given the
starting shell's copy. For the bundled example task apps it serves at ``<its URL>/task-apps/<name>`` the
backend knows the key itself, so it uses that one when it holds no other (probe and execution alike) and
says so once per URL in its log. A task app anywhere else still needs its key handed over.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from synth_nb.local.examples import TASK_APP_PREFIX, TASK_APPS

__all__ = ["TaskAppKeys", "job_task_url", "own_example", "served_in_process"]

log = logging.getLogger(__name__)

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def job_task_url(kind: str, body: dict[str, Any]) -> str | None:
    """The task app a job of ``kind`` calls, as its create body names it (None when it names none)."""
    if kind == "rl":
        data = _table(body.get("data"))
        config = _table(data.get("config") or body.get("config"))
        found = (data.get("endpoint_base_url") or body.get("endpoint_base_url")
                 or _table(config.get("services")).get("task_url"))
    elif kind == "prompt_learning":
        section = _table(_table(body.get("config_body")).get("prompt_learning")) or _table(body.get("prompt_learning"))
        found = section.get("task_app_url")
    else:
        found = None
    return found if isinstance(found, str) else None


def own_example(url: str, backend_url: str) -> str | None:
    """The bundled example ``url`` names when it is served by the backend at ``backend_url``, else None.

    Loopback under any spelling (``localhost``, ``127.0.0.1``) on the backend's own port; no credentials,
    query or other path: anything else may be another program, which must never be sent this key.
    """
    try:
        task, ours = urlsplit(url), urlsplit(backend_url)
        task_port, our_port = task.port, ours.port
    except ValueError:
        return None
    if (task.scheme != "http" or task.username is not None or task.password is not None or task.query
            or task.fragment or (task.hostname or "") not in _LOOPBACK or task_port is None
            or task_port != our_port):
        return None
    prefix, _, name = task.path.rstrip("/").rpartition("/")
    return name if prefix == TASK_APP_PREFIX and name in TASK_APPS else None


def served_in_process(url: str, backend_url: str) -> str | None:
    """The bundled example ``url`` names when it is provably the one this backend process serves: as
    ``own_example``, and on the very host it listens on (``localhost`` may be another program on ``::1``)."""
    name = own_example(url, backend_url)
    if name is None or urlsplit(url).hostname != urlsplit(backend_url).hostname:
        return None
    return name


class TaskAppKeys:
    """The task-app key for a URL: the ``ENVIRONMENT_API_KEY`` held, else the example apps' own key for
    this backend's own example URLs (``backend_url()`` is where it listens), else none."""

    def __init__(self, example_key: str | None, backend_url: Callable[[], str]) -> None:
        self._example_key = example_key
        self._backend_url = backend_url
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def for_url(self, url: str | None, held: str | None) -> str | None:
        if held:
            return held
        if not url or not self._example_key:
            return None
        name = own_example(url, self._backend_url())
        if name is None:
            return None
        with self._lock:
            first = url not in self._said
            self._said.add(url)
        if first:
            log.warning("no ENVIRONMENT_API_KEY was handed over: using the key of this backend's own bundled "
                        "example task app '%s' for %s", name, url)
        return self._example_key
