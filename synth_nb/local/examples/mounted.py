"""The bundled task apps served by the embedded backend itself, at ``/task-apps/<name>`` on its own port.

A newcomer then runs the examples with nothing started by hand: the task URL is
``<backend URL>/task-apps/banking``. They stay separate HTTP servers on the task-app contract (the
executors call them over HTTP like any other task app, so a user's own app can replace them); each is
built on its first request, so the backend starts as fast without them.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence

from starlette.routing import Mount
from starlette.types import ASGIApp, Receive, Scope, Send

from synth_nb.local.examples import TASK_APPS, task_app_path

__all__ = ["example_routes"]


class _BuiltOnFirstRequest:
    """An example task app, imported and built when it is first called."""

    def __init__(self, name: str, keys: Callable[[], Sequence[str]]) -> None:
        self._name = name
        self._keys = keys
        self._app: ASGIApp | None = None
        self._lock = threading.Lock()

    def _build(self) -> ASGIApp:
        with self._lock:
            if self._app is None:
                create_app = importlib.import_module(f"synth_nb.local.examples.{self._name}").create_app
                self._app = create_app(api_key=self._keys)
            return self._app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self._app or self._build()
        await app(scope, receive, send)


def example_routes(keys: Callable[[], Sequence[str]]) -> list[Mount]:
    """One mount per bundled example; ``keys()`` are the task-app keys accepted at that moment."""
    return [Mount(task_app_path(name), app=_BuiltOnFirstRequest(name, keys)) for name in TASK_APPS]
