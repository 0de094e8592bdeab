"""What a message may show of a value the user wrote: never a secret, even one put in the wrong place.

A key pasted into ``--model`` or written as ``[job].model`` ends up in the error that rejects it. So every
message that quotes a flag or config value goes through :func:`shown`: known secret values, and anything
that looks like a key (``sk_…``, ``ghp_…``, or a long random-looking token), keep at most their last 4
characters (``synth_nb.secrets.mask``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from synth_nb.secrets._mask import mask, mask_userinfo, revealed

if TYPE_CHECKING:
    from pydantic import SecretStr

__all__ = ["is_secret_key", "looks_like_secret", "redact", "redact_value", "shown"]

#: parts of a key name that make its value a secret wherever they sit (``task_app_api_key``, ``api_key_header``,
#: ``db_password``, ``client_secret``, ``credentials``, ``proxy_authorization``, ``private_key``)
_SECRET_PARTS = ("api_key", "apikey", "secret", "password", "passwd", "passphrase", "credential", "authorization",
                 "bearer", "private_key", "access_key", "cookie")
#: whole words of a key name that do the same (``auth``, ``auth_header``, ``token``, ``access_token``, ``key``)
_SECRET_WORDS = frozenset({"auth", "token", "jwt", "key"})
#: what a name ends with when its value only says where a secret is, or counts (``api_key_env``, ``max_tokens``)
_NOT_SECRET_ENDS = frozenset({"env", "var", "variable", "name", "file", "path", "url", "count", "counts", "limit",
                              "budget", "used", "total", "max", "min", "type", "mode", "length", "size", "id", "model"})
#: names with a secret-looking word that are not secrets
_NOT_SECRET = frozenset({"max_tokens", "idempotency_key", "sort_key", "cache_key", "session_id", "token_budget"})
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
#: well-known key prefixes, credentials after an HTTP auth scheme (``Bearer …``, ``Basic …``), JSON web tokens,
#: then long letter+digit blobs (random tokens, hex digests)
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?:(?:sk|pk|rk|gsk|ghp|gho|ghu|ghs|github_pat|hf|xox[abprs])[-_][A-Za-z0-9_-]{8,}"
    r"|AIza[0-9A-Za-z_-]{20,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*|[A-Za-z0-9]{16,})(?![A-Za-z0-9])"
)
#: ``Bearer <credentials>`` (also Basic, Token, Digest): credentials of any shape that hold a digit or are long
#: (``Basic Q0FO…``, ``Bearer abc.def``), not the next word of a sentence ("token authentication")
_AUTH_SCHEME = re.compile(r"(?i)\b(bearer|basic|token|digest)(\s+)"
                          r"((?=[A-Za-z._~+/=:-]*[0-9])[A-Za-z0-9._~+/=:-]{8,}|[A-Za-z0-9._~+/=:-]{20,})")


def _words(name: str) -> list[str]:
    """``apiKeyHeader`` / ``api-key-header`` / ``API_KEY_HEADER`` -> ``["api", "key", "header"]``."""
    return [w for w in re.split(r"[^a-z0-9]+", _CAMEL.sub(r"\1_\2", name).lower()) if w]


def is_secret_key(name: object) -> bool:
    """True for a key name whose value is a secret: ``api_key``, ``task_app_api_key``, ``api_key_header``,
    ``auth``, ``authorization``, ``credentials``, ``bearer``, ``token``, ``password``, ``client_secret``...
    (not ``max_tokens``, ``tokenizer``, ``api_key_env``: a count, a tool, the name of a variable)."""
    if not isinstance(name, str):
        return False
    words = _words(name)
    joined = "_".join(words)
    if not words or joined in _NOT_SECRET or (len(words) > 1 and words[-1] in _NOT_SECRET_ENDS):
        return False
    return any(part in joined for part in _SECRET_PARTS) or any(w in _SECRET_WORDS for w in words)


def _is_token(text: str) -> bool:
    if text.startswith("AIza") or not text.isalnum():
        return True  # a prefixed key (sk_..., gsk_...) or a Google key
    return any(c.isalpha() for c in text) and any(c.isdigit() for c in text)


def looks_like_secret(value: object) -> bool:
    """True when ``value`` contains something shaped like an API key or token (``sk-…``, ``Bearer …``, a JWT, a
    long random-looking string)."""
    return isinstance(value, str) and (any(_is_token(m.group(0)) for m in _TOKEN.finditer(value))
                                       or _AUTH_SCHEME.search(value) is not None)


def _raw(secret: str | SecretStr) -> str:
    return revealed(secret)


def redact(text: str, secrets: Iterable[str | SecretStr] = ()) -> str:
    """``text`` with every known secret and every key-shaped token replaced by its mask."""
    for raw in sorted({_raw(s) for s in secrets if _raw(s)}, key=len, reverse=True):
        text = text.replace(raw, mask(raw))
    text = _AUTH_SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{mask(m.group(3))}", text)
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
