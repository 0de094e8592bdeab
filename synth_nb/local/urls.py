"""Task-app endpoints from a base URL that may carry a query string (``http://host/app?token=...``)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["endpoint"]


def endpoint(base: str, path: str) -> str:
    """``base`` with ``path`` (``/health``, ``/rollout``) appended to its path, before any query string.

    Plain string concatenation would put it after the query (``...?token=x/rollout``).
    """
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path, fragment=""))
