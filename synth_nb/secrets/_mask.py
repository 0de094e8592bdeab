"""The one masking rule every output path uses (CLI, previews, widgets, logs, errors, summaries)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import SecretStr

__all__ = ["MASK_CHAR", "mask", "mask_text", "mask_userinfo", "revealed", "secret_parts"]

MASK_CHAR = "•"
_MIN_LEN_FOR_TAIL = 12
_TAIL = 4


def revealed(value: Any) -> Any:
    """The value a ``SecretStr`` (or anything holding a secret the same way) holds; any other value as it is.

    Asked of the object, not checked against pydantic's class: the masking rule imports no pydantic, which a
    command that only masks what it prints (``synth-nb cancel``) need not load."""
    reveal = getattr(value, "get_secret_value", None)
    return reveal() if callable(reveal) else value


def secret_parts(raw: str) -> list[str]:
    """A secret's value and, for a comma list (``ENVIRONMENT_API_KEY_ALIASES``), each of its keys: what masking
    must find of it in a text."""
    return [raw, *(part.strip() for part in raw.split(",") if part.strip())] if "," in raw else [raw]


def mask(value: str | SecretStr | None) -> str:
    """Return a display-safe stand-in for ``value``.

    At most the last 4 characters survive, and only for values of 12 characters or more, so a short
    secret never leaks a meaningful fraction of itself. ``None``/empty gives ``""``.
    """
    if value is None:
        return ""
    raw = str(revealed(value))
    if not raw:
        return ""
    if len(raw) < _MIN_LEN_FOR_TAIL:
        return MASK_CHAR * 4
    return MASK_CHAR * 4 + raw[-_TAIL:]


#: ``scheme://userinfo@``: the userinfo runs to the last ``@`` before the host ends (``/``, ``?``, ``#``)
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)([^/?#\s]+)@")


def mask_userinfo(text: str) -> str:
    """Every ``scheme://user:password@host`` in ``text`` with its ``user:password`` masked.

    Credentials written into a URL (``--backend http://user:KEY@host``) are a secret like any other, but
    no list of known values holds them, so they are found by shape. Nothing of them is kept: a password
    is often short, and its last 4 characters would be most of it.
    """
    if "@" not in text:
        return text
    return _USERINFO.sub(lambda m: f"{m.group(1)}{MASK_CHAR * 4}@", text)


def mask_text(text: str, secrets: list[str | SecretStr] | tuple[Any, ...]) -> str:
    """Replace every occurrence of each secret in ``text`` by its mask (longest secrets first), and the
    credentials of every URL in it (``mask_userinfo``)."""
    values = []
    for s in secrets:
        raw = revealed(s)
        if raw:
            values.append(raw)
    for raw in sorted(values, key=len, reverse=True):
        text = text.replace(raw, mask(raw))
    return mask_userinfo(text)
