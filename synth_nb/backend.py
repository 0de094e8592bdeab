"""Which backend a submission goes to, and the one rule that turns a URL into a backend base URL.

Precedence: ``--backend`` > ``SYNTH_BACKEND_OVERRIDE`` > the hosted default. Only the *process*
environment is consulted for ``SYNTH_BACKEND_OVERRIDE`` (as in synth-ai 0.2.24, a value in a ``.env``
file does not move the backend). ``--backend local`` names the embedded local backend: it is kept as the
``LOCAL`` sentinel here, and ``synth_nb.pipeline`` starts that backend and uses its URL and key.

A URL may carry credentials (``http://user:KEY@host``, for a proxy in front of the backend). They are
sent, but every place that shows or stores a backend URL uses ``display_url``, which masks them; so a URL
read back from the job registry or a recording holds no credentials, and is refused with a hint to pass
it again with ``--backend``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from synth_nb.errors import ConfigError, OverrideError
from synth_nb.secrets._mask import MASK_CHAR, mask_userinfo
from synth_nb.secrets.redact import shown

__all__ = ["DEFAULT_BACKEND", "LOCAL", "display_url", "is_local", "normalize_backend_url", "resolve_backend",
           "url_problem"]

DEFAULT_BACKEND = "https://agent-learning.onrender.com"
#: the ``--backend`` value that asks for the embedded local backend
LOCAL = "local"
_SCHEMES = ("http://", "https://")


def is_local(value: str | None) -> bool:
    """True for the ``--backend local`` sentinel (surrounding blanks ignored)."""
    return value is not None and value.strip() == LOCAL


def display_url(url: str) -> str:
    """``url`` as it may be shown, logged or stored: credentials in it masked (``http://••••@host/api``)."""
    return mask_userinfo(url)


def url_problem(url: str) -> str | None:
    """Why ``url`` is not a usable http(s) URL (``None`` when it is): scheme, host, port, no blanks."""
    if not url.lower().startswith(_SCHEMES):
        return "must start with http:// or https://"
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        return "must not contain spaces or control characters"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    if not parts.hostname:
        return "has no host name"
    if parts.port == 0:
        return "has port 0, where nothing can be reached"
    if any(ch.isdigit() and not ch.isascii() for ch in parts.netloc):
        return "has digits that are not ASCII 0-9 in its host or port"
    if MASK_CHAR in (parts.netloc.rpartition("@")[0]):
        return ("holds masked credentials (a stored URL never keeps them); pass the backend URL with its "
                "credentials again with --backend")
    return None


def normalize_backend_url(url: str) -> str:
    """``http://host[:port][/api][/v1][/]`` -> ``http://host[:port]/api``: every path is relative to it."""
    raw = (url or "").strip()
    problem = url_problem(raw)
    if problem:
        raise ConfigError(f"backend URL {shown(display_url(raw))} {problem}", key="backend",
                          hint="e.g. --backend http://127.0.0.1:8000")
    base = raw.rstrip("/")
    if base.endswith("/v1") and "/api" in base:
        base = base[: -len("/v1")]
    return base if base.endswith("/api") else base + "/api"


def resolve_backend(arg: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The backend base URL (ending in ``/api``), or ``LOCAL`` for ``--backend local``."""
    env = os.environ if environ is None else environ
    if arg is not None and not arg.strip():  # ``--backend "$URL"`` with $URL unset must not mean the hosted one
        raise OverrideError("--backend is empty (an unset variable?): give an http(s) URL or 'local', or leave "
                            "--backend out to use SYNTH_BACKEND_OVERRIDE or the hosted backend", field="backend")
    for value, origin in ((arg, "--backend"), (env.get("SYNTH_BACKEND_OVERRIDE"), "SYNTH_BACKEND_OVERRIDE")):
        if value is None or not value.strip():
            continue
        url = value.strip()
        if origin == "--backend" and url == LOCAL:
            return LOCAL
        problem = url_problem(url)
        if problem:
            accepted = "an http(s) URL such as http://localhost:8000" + (" or 'local'" if origin == "--backend" else "")
            raise OverrideError(f"{origin} {shown(display_url(url))} {problem} (expected {accepted})", field="backend")
        return normalize_backend_url(url)
    return normalize_backend_url(DEFAULT_BACKEND)

