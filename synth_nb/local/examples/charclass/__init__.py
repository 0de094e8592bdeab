"""Character-class RL example: a task app a tiny model learns within minutes (see ``app``)."""

from __future__ import annotations

import os
import secrets
from typing import Any

from synth_nb.local.examples.charclass.app import (
    APP_ID,
    CLASSES,
    REPLY_CHARS,
    create_app,
    instance,
    score_reply,
)

__all__ = ["APP_ID", "CLASSES", "REPLY_CHARS", "create_app", "instance", "score_reply", "serve"]


def serve(port: int = 0, api_key: str | None = None) -> tuple[Any, str]:
    """Serve the app on 127.0.0.1 in a background thread; returns (server handle with .url/.stop(), key)."""
    from synth_nb.local.examples._serve import serve_in_thread

    key = api_key or os.environ.get("ENVIRONMENT_API_KEY") or f"sk_env_{secrets.token_hex(16)}"
    return serve_in_thread(create_app(api_key=key), port=port, name="task-app-charclass"), key
