"""The embedded local backend: a real HTTP server speaking the Synth backend contract.

Needs the ``local`` extra. Depends only on the public HTTP contract (like any external server would):
nothing here imports synth_nb's client, job monitor or notebook layers. Names are imported lazily so
``import synth_nb.local`` stays cheap.

    with start_backend() as backend:            # 127.0.0.1, free port, temporary data dir, generated key
        ...  # point a client at backend.url with backend.api_key

``shared.ensure_backend(data_dir)`` runs one in a background process of its own instead, found again by
every later process through ``<data_dir>/backend.json`` (what ``--backend local`` uses).

``start_backend(default_executor="replay", executor_options={"replay": {"speed": 10}})`` replays the
bundled recordings for every job (demos, tests, any client including synth-ai 0.2.24's CLI); replays may
also read files in ``recordings_dir``. Every error raised on purpose is an ``errors.LocalBackendError``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from synth_nb.local.serve import LocalBackend, start_backend
    from synth_nb.local.server.app import create_app

__all__ = ["LocalBackend", "create_app", "start_backend"]

_LAZY = {
    "LocalBackend": "synth_nb.local.serve",
    "start_backend": "synth_nb.local.serve",
    "create_app": "synth_nb.local.server.app",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'synth_nb.local' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
