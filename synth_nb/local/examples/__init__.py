"""Bundled example task apps, served on 127.0.0.1 in a background thread (needs the ``local`` extra).

``start_task_app("banking")`` (prompt learning) or ``start_task_app("charclass")`` (RL) returns a handle
with ``.url``, ``.api_key`` and ``.stop()``; the same apps run in the foreground with
``synth-nb task-app NAME``. The embedded backend also serves each one itself at ``task_app_path(name)``
on its own port (``examples.mounted``).
"""

from __future__ import annotations

import importlib
import os
import secrets
from typing import Any

__all__ = ["TASK_APPS", "TaskAppHandle", "start_task_app", "task_app_path"]

#: example name -> one-line description; each is the package ``synth_nb.local.examples.<name>`` exposing
#: ``create_app(api_key=..., policy_api_key=...)``, imported lazily by ``start_task_app`` (keeps this module light)
TASK_APPS: dict[str, str] = {
    "banking": "Banking intent classification (16 intents, train/test splits) for prompt learning.",
    "charclass": "Reply in one character class (digits, capitals, ...) for RL; a tiny model learns it in minutes.",
}

#: where the embedded backend serves the examples, on its own port
TASK_APP_PREFIX = "/task-apps"


def task_app_path(name: str) -> str:
    """``/task-apps/<name>``: the path of a bundled example on the backend that serves it."""
    return f"{TASK_APP_PREFIX}/{name}"


class TaskAppHandle:
    """A running example task app."""

    def __init__(self, name: str, server: Any, api_key: str) -> None:
        self.name = name
        self.url: str = server.url
        self.port: int = server.port
        self.api_key = api_key
        self._server = server

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> TaskAppHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:  # never shows the key
        return f"TaskAppHandle(name={self.name!r}, url={self.url!r})"


def start_task_app(name: str = "banking", port: int = 0, api_key: str | None = None, *,
                   policy_api_key: str | None = None) -> TaskAppHandle:
    """Serve example ``name`` on 127.0.0.1:``port`` (0 = free port).

    The key is ``api_key``, else ENVIRONMENT_API_KEY, else a fresh random one (read it from the handle).
    ``policy_api_key`` is the only credential the app sends to a rollout's policy (none by default).
    """
    if name not in TASK_APPS:
        raise ValueError(f"unknown example task app {name!r}; available: {', '.join(sorted(TASK_APPS))}")
    from synth_nb.local.examples._serve import serve_in_thread

    create_app = importlib.import_module(f"{__name__}.{name}").create_app
    key = api_key or os.environ.get("ENVIRONMENT_API_KEY") or f"sk_env_{secrets.token_hex(16)}"
    server = serve_in_thread(create_app(api_key=key, policy_api_key=policy_api_key), port=port,
                             name=f"task-app-{name}")
    return TaskAppHandle(name, server, key)
