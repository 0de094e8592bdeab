"""Which backend a submission goes to: ``--backend`` > ``SYNTH_BACKEND_OVERRIDE`` > the hosted default.

Only the *process* environment is consulted for ``SYNTH_BACKEND_OVERRIDE`` (as in synth-ai 0.2.24, a value
in a ``.env`` file does not move the backend). ``--backend local`` is resolved by callers, which start the
embedded backend and pass its URL here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from synth_nb.errors import OverrideError

__all__ = ["DEFAULT_BACKEND", "ensure_api_base", "resolve_backend"]

DEFAULT_BACKEND = "https://agent-learning.onrender.com"


def ensure_api_base(url: str) -> str:
    """``http://h:8000``, ``http://h:8000/``, ``http://h:8000/api/`` all become ``http://h:8000/api``."""
    base = url.strip().rstrip("/")
    return base if base.endswith("/api") else base + "/api"


def resolve_backend(arg: str | None, environ: Mapping[str, str] | None = None) -> str:
    """Return the backend base URL, always ending in ``/api``."""
    env = os.environ if environ is None else environ
    for value, origin in ((arg, "--backend"), (env.get("SYNTH_BACKEND_OVERRIDE"), "SYNTH_BACKEND_OVERRIDE")):
        if value is not None and value.strip():
            url = value.strip()
            if not url.startswith(("http://", "https://")):
                raise OverrideError(
                    f"{origin} must be an http(s) URL such as http://localhost:8000, got {url!r}"
                )
            return ensure_api_base(url)
    return ensure_api_base(DEFAULT_BACKEND)
