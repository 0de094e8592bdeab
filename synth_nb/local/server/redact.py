"""Keep secrets that arrive in job bodies (e.g. ``task_app_api_key``) out of every response."""

from __future__ import annotations

import re
from typing import Any

from synth_nb.local.lifecycle import mask_secret

__all__ = ["redact"]

_SECRET_KEY = re.compile(r"(api_?key|secret|token|password|authorization)$", re.IGNORECASE)
# token counters are numbers, not secrets
_NOT_SECRET = re.compile(r"(max_tokens|tokens?_(used|budget|count)|counting)", re.IGNORECASE)


def redact(value: Any) -> Any:
    """A copy of ``value`` with string values of secret-looking keys masked (recursively)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if (isinstance(item, str) and _SECRET_KEY.search(str(key))
                    and not _NOT_SECRET.search(str(key))):
                out[key] = mask_secret(item)
            else:
                out[key] = redact(item)
        return out
    if isinstance(value, list):
        return [redact(item) for item in value]
    return value
