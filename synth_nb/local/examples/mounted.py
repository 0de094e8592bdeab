"""The bundled task apps served by the embedded backend itself, at ``/task-apps/<name>`` on its own port.

A newcomer then runs the examples with nothing started by hand: the task URL is
``<backend URL>/task-apps/banking``. They stay task apps on the task-app contract (a user's own app can
replace them); each is built on its first request, so the backend starts as fast without them.

A job of the same backend calls such an app's ``/rollout`` in-process (``rollout_in_process``) and the app
calls the job's policy route in-process (``local_policies``): both ends are in this process, so the two
loopback round trips per rollout were pure cost. The contract's checks are the same code on both transports
(``TaskAppContract``); any other URL, a task app of another process included, is called over HTTP.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.types import Receive, Scope, Send

from synth_nb.local.examples import TASK_APPS, task_app_path
from synth_nb.local.own_task_apps import served_in_process

if TYPE_CHECKING:  # the contract (aiohttp, msgspec) is imported with the first example built, not at start-up
    from synth_nb.local.examples.contract import LocalPolicies, RolloutAnswer, TaskAppContract

__all__ = ["MountedExamples"]


class _BuiltOnFirstRequest:
    """An example task app, imported and built when it is first called."""

    def __init__(self, name: str, keys: Callable[[], Sequence[str]], local_policies: LocalPolicies) -> None:
        self._name = name
        self._keys = keys
        self._local_policies = local_policies
        self._app: Starlette | None = None
        self._lock = threading.Lock()

    def app(self) -> Starlette:
        with self._lock:
            if self._app is None:
                create_app = importlib.import_module(f"synth_nb.local.examples.{self._name}").create_app
                self._app = create_app(api_key=self._keys, local_policies=self._local_policies)
            return self._app

    @property
    def contract(self) -> TaskAppContract:
        contract: TaskAppContract = (self._app or self.app()).state.contract
        return contract

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await (self._app or self.app())(scope, receive, send)


class MountedExamples:
    """The bundled examples one backend serves: ``keys()`` are the task-app keys accepted at that moment,
    ``local_policies`` the policy routes of the same backend (``policy_proxy.in_process``)."""

    def __init__(self, keys: Callable[[], Sequence[str]], local_policies: LocalPolicies) -> None:
        self._apps = {name: _BuiltOnFirstRequest(name, keys, local_policies) for name in TASK_APPS}

    def routes(self) -> list[Mount]:
        return [Mount(task_app_path(name), app=app) for name, app in self._apps.items()]

    def rollout_in_process(self, url: str, backend_url: str) -> RolloutAnswer | None:
        """``/rollout`` of the example at ``url`` called in this process when the backend at ``backend_url``
        (this process) serves it, else None (the caller uses HTTP)."""
        name = served_in_process(url, backend_url) if backend_url else None
        return self._apps[name].contract.rollout_in_process if name is not None else None
