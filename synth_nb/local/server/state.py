"""What every route handler shares: storage, runner, SSE signals and the server's options."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from synth_nb.local.held_keys import HeldKeys
from synth_nb.local.runner import JobRunner
from synth_nb.local.server.streaming import JobSignals
from synth_nb.local.storage import Storage

__all__ = ["BackendState", "state_of"]


@dataclass
class BackendState:
    storage: Storage
    runner: JobRunner
    signals: JobSignals
    api_key: str
    #: keys clients handed over (``POST /env-keys``) and the bundled example apps' own key
    held_keys: HeldKeys
    #: executor used for every job that does not name one (``"replay"`` lets 0.2.24 jobs run anywhere)
    default_executor: str | None = None
    max_upload_bytes: int = 200 * 1024 * 1024
    #: largest JSON body (job creation, policy calls) read before answering 413
    max_json_bytes: int = 16 * 1024 * 1024
    keepalive_seconds: float = 15.0
    #: seconds to wait for a task app in ``/rl/verify_task_app``
    probe_timeout: float = 10.0


def state_of(request: Request) -> BackendState:
    state: BackendState = request.app.state.backend
    return state
