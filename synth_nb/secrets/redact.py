"""What a message may show of a value the user wrote: never a secret, even one put in the wrong place.

A key pasted into ``--model`` or written as ``[job].model`` ends up in the error that rejects it. So every
message that quotes a flag or config value goes through :func:`shown`: known secret values, and anything
that looks like a key (``sk_…``, ``ghp_…``, or a long random-looking token), keep at most their last 4
characters (``synth_nb.secrets.mask``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pydantic import SecretStr

from synth_nb.secrets._mask import mask, mask_userinfo

__all__ = ["is_secret_key", "looks_like_secret", "redact", "redact_value", "shown"]

#: config key names whose values are secrets wherever they sit (``task_app_api_key``, ``token``...)
_SECRET_KEY = re.compile(r"(api_key|apikey|secret|password|passwd|credential|(^|_)token$|(^|_)key$)", re.I)
#: well-known key prefixes, then long letter+digit blobs (random tokens, hex digests)
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?:(?:sk|pk|rk|gsk|ghp|gho|ghu|ghs|github_pat|hf|xox[abprs])[-_][A-Za-z0-9_-]{8,}"
    r"|AIza[0-9A-Za-z_-]{20,}|[A-Za-z0-9]{16,})(?![A-Za-z0-9])"
)


def is_secret_key(name: object) -> bool:
    """True for a key name that holds a secret (``api_key``, ``task_app_api_key``, ``token``...)."""
    return isinstance(name, str) and bool(_SECRET_KEY.search(name))


def _is_token(text: str) -> bool:
    if text.startswith("AIza") or not text.isalnum():
        return True  # a prefixed key (sk_..., gsk_...) or a Google key
    return any(c.isalpha() for c in text) and any(c.isdigit() for c in text)


def looks_like_secret(value: object) -> bool:
    """True when ``value`` contains something shaped like an API key or token."""
    return isinstance(value, str) and any(_is_token(m.group(0)) for m in _TOKEN.finditer(value))


def _raw(secret: str | SecretStr) -> str:
    return secret.get_secret_value() if isinstance(secret, SecretStr) else secret


def redact(text: str, secrets: Iterable[str | SecretStr] = ()) -> str:
    """``text`` with every known secret and every key-shaped token replaced by its mask."""
    for raw in sorted({_raw(s) for s in secrets if _raw(s)}, key=len, reverse=True):
        text = text.replace(raw, mask(raw))
    text = _TOKEN.sub(lambda m: mask(m.group(0)) if _is_token(m.group(0)) else m.group(0), text)
    return mask_userinfo(text)


def shown(value: object, secrets: Iterable[str | SecretStr] = ()) -> str:
    """``repr(value)`` for a message, with secrets and key-shaped tokens masked."""
    if isinstance(value, str):
        return repr(redact(value, secrets))
    return redact(repr(value), secrets)


def redact_value(key: object, value: Any) -> Any:
    """``value`` (a config value under ``key``) with secret strings masked, recursively; for reprs."""
    if isinstance(value, str):
        return mask(value) if is_secret_key(key) else redact(value)
    if isinstance(value, dict):
        return {k: redact_value(k, v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(key, v) for v in value]
    return value
