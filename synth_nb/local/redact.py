"""Keep secrets that arrive in job bodies (e.g. ``task_app_api_key``) out of responses, events and errors."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from synth_nb.local.lifecycle import mask_secret

__all__ = ["redact", "scrub", "secret_values"]

_SECRET_KEY = re.compile(r"(api_?key|secret|token|password|authorization)$", re.IGNORECASE)
# token counters are numbers, not secrets
_NOT_SECRET = re.compile(r"(max_tokens|tokens?_(used|budget|count)|counting)", re.IGNORECASE)


def _is_secret_key(key: object) -> bool:
    return bool(_SECRET_KEY.search(str(key))) and not _NOT_SECRET.search(str(key))


def redact(value: Any) -> Any:
    """A copy of ``value`` with string values of secret-looking keys masked (recursively)."""
    if isinstance(value, dict):
        return {key: mask_secret(item) if isinstance(item, str) and _is_secret_key(key) else redact(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [redact(item) for item in value]
    return value


def secret_values(value: Any) -> list[str]:
    """String values of secret-looking keys anywhere in ``value`` (at least 4 characters long)."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and _is_secret_key(key) and len(item) >= 4:
                found.append(item)
            else:
                found.extend(secret_values(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(secret_values(item))
    return found


def scrub(text: str, secrets: Iterable[str]) -> str:
    """Replace each secret in ``text`` by its mask (longest first)."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret and secret in text:
            text = text.replace(secret, mask_secret(secret))
    return text
