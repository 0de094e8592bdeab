"""The process environment as a secrets source."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

__all__ = ["SOURCE", "read_environment"]

SOURCE = "environment"


def read_environment(keys: Iterable[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Non-empty values of ``keys`` in ``environ`` (default ``os.environ``), whitespace-stripped."""
    env = os.environ if environ is None else environ
    found: dict[str, str] = {}
    for key in keys:
        value = env.get(key)
        if value is not None and value.strip():
            found[key] = value.strip()
    return found
