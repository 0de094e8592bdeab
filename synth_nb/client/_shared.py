"""What both transports of the client keep to, apart from either: how large, deep and slow an answer may be,
how its JSON is read, how often and when a request is tried again, and how a contract path becomes a URL.

``AsyncSynthClient`` (httpx) and ``PlainClient`` (the standard library's HTTP client) read these from here, so
the two cannot drift apart; this module imports neither httpx nor stamina (``synth-nb cancel`` loads it alone).
"""

from __future__ import annotations

import email.utils
import re
import time
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

__all__ = ["FIRST_CONTACT_RETRY", "FIRST_CONTACT_SECONDS", "MAX_ANSWER_BYTES", "MAX_DEPTH", "MAX_REDIRECTS",
           "MAX_RETRY_AFTER", "RETRY_ATTEMPTS", "RETRY_WAIT_INITIAL", "RETRY_WAIT_MAX", "answer_seconds", "as_dict",
           "contract_url", "json_body", "parse_retry_after", "path_segment", "split_credentials", "too_deep"]

#: the largest answer read (after content decoding): a page of 10,000 events is about 2-4 MiB
MAX_ANSWER_BYTES = 64 * 2**20
#: the deepest nesting of arrays and objects accepted in an answer (the contract's documents use < 10)
MAX_DEPTH = 64
#: the bytes that are not JSON structure (quotes and brackets), deleted by ``bytes.translate``
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b'"[]{}')
#: a string left over once the bracket-free ones are gone (its content holds brackets)
_STRING = re.compile(rb'"[^"]*"')
#: answers up to this size are first told by counting their brackets (a page of history has thousands: two
#: passes over megabytes for nothing, the structure's own pass tells it)
_COUNTED = 64 * 1024

#: attempts per request, and the exponential backoff between them (jittered by up to the initial wait)
RETRY_ATTEMPTS = 6
RETRY_WAIT_INITIAL = 0.25
RETRY_WAIT_MAX = 10.0
#: never sleep longer than this for one Retry-After, whatever the server says
MAX_RETRY_AFTER = 60.0
#: how long a backend that never answered is tried before the client says it cannot be reached: the
#: retry budget is for a backend that answered before and stopped (a restart, a deploy), not for a typo
FIRST_CONTACT_SECONDS = 2.0
FIRST_CONTACT_RETRY = 0.5
#: redirects followed for one request (httpx's default)
MAX_REDIRECTS = 20


def answer_seconds(timeout: float | None) -> float:
    """The longest one answer may take to arrive in full (the timeouts apply to each read alone)."""
    return max(2 * (timeout or 30.0), 60.0)


def too_deep(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text ``raw`` nests arrays and objects more than ``limit`` levels deep (within a factor
    of two: one level more than ``limit`` may pass, ``2 * limit`` never does). Linear and in C: the strings
    and everything but brackets are dropped, then innermost pairs are removed a level per pass."""
    if len(raw) <= _COUNTED and raw.count(b"[") + raw.count(b"{") <= limit:  # an event frame, a status document
        return False
    if b"\\" in raw:  # escaped backslashes and quotes would unbalance the quotes
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    # adjacent quotes close a string and open the next, or close an empty one: either way nothing between
    # them is structure, so dropping the pairs keeps the structure exactly
    structure = raw.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in structure:
        structure = _STRING.sub(b"", structure)
    for _ in range(limit):
        if not structure:
            return False
        inner = structure.replace(b"[]", b"").replace(b"{}", b"")
        if len(inner) == len(structure):  # unbalanced, so not JSON: deep if its opening brackets are many
            return structure.count(b"[") + structure.count(b"{") > limit
        structure = inner
    return bool(structure)


def json_body(answer: Any) -> Any:
    """The decoded JSON of an answer read in full (httpx's or ``PlainAnswer``): ``{}`` for an empty body, and
    ``{"raw": ...}`` (its first 1,000 characters) for one that is no JSON."""
    if not answer.content:
        return {}
    try:
        return answer.json()
    except ValueError:
        return {"raw": answer.text[:1000]}


def as_dict(data: Any) -> dict[str, Any]:
    """A JSON document as the object the contract's answers are (another value under ``data``)."""
    return data if isinstance(data, dict) else {"data": data}


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, min(seconds, MAX_RETRY_AFTER))


def path_segment(value: str) -> str:
    """``value`` as one path segment: percent-encoded, and ``.``/``..`` too (a URL would drop them)."""
    segment = quote(value, safe="")
    return segment.replace(".", "%2E") if segment in (".", "..") else segment


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``http://user:pw@host/api`` -> (``http://host/api``, (user, pw)): requests go to the URL without its
    credentials, which travel as basic auth instead, so no log or error holds them."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    bare = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    return bare, (unquote(parts.username or ""), unquote(parts.password or ""))


def contract_url(base: str, path: str) -> str:
    """Absolute URL for a contract path under ``base`` (which ends in ``/api``); a leading ``/api`` is not
    doubled, and an absolute URL is kept."""
    if path.startswith(("http://", "https://")):
        return path
    if path.startswith("/api/") or path == "/api":
        path = path[len("/api"):]
    return f"{base}/{path.lstrip('/')}"
