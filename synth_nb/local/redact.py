"""Keep secrets that arrive in job bodies (e.g. ``task_app_api_key``) out of storage, responses, events and errors.

A create body is split on arrival: ``withhold_secrets`` gives the body to store (each secret replaced by
its mask) and the secrets themselves, which live only in the server's memory; ``restore_secrets`` puts
them back for the executor that runs the job. A URL with credentials (``http://user:KEY@host``, under any
key) is a secret too: it is stored with its userinfo masked and used whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from synth_nb.local.lifecycle import mask_secret

__all__ = ["Withheld", "redact", "restore_secrets", "scrub", "secret_values", "withhold_secrets"]

#: the names whose values are withheld (the client's ``secrets.redact.is_secret_key`` says the same of them:
#: this package imports nothing of synth_nb outside it): ``api_key``, ``api_key_header``, ``auth``,
#: ``authorization``, ``bearer``, ``credentials``, ``password``, ``client_secret``, ``access_token``...
_SECRET_KEY = re.compile(r"(api_?key(_?header)?|secret|token|passw(or)?d|passphrase|authorization|(^|[_-])auth"
                         r"|bearer|credentials?|cookie|private_?key)$", re.IGNORECASE)
# token counters are numbers, not secrets
_NOT_SECRET = re.compile(r"(max_tokens|tokens?_(used|budget|count)|counting)", re.IGNORECASE)
_MASK_PREFIX = mask_secret("x" * 12)[:4]
#: ``scheme://userinfo@``: the userinfo runs to the last ``@`` before the host ends (as ``secrets.mask_userinfo``)
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#\s]+)@")

#: where each withheld secret sat in the body (dict keys and list indices) -> its value
Withheld = dict[tuple[str | int, ...], str]


def _is_secret_key(key: object) -> bool:
    return bool(_SECRET_KEY.search(str(key))) and not _NOT_SECRET.search(str(key))


def _userinfo(value: str) -> str | None:
    """The credentials of a URL string (``user:KEY`` of ``http://user:KEY@host``), None when it has none."""
    found = _USERINFO.match(value) if "@" in value else None
    return found.group(2) if found and not found.group(2).startswith(_MASK_PREFIX) else None


def _mask_url(value: str) -> str:
    return _USERINFO.sub(lambda m: f"{m.group(1)}{mask_secret(m.group(2))}@", value)


def redact(value: Any) -> Any:
    """A copy of ``value`` with string values of secret-looking keys masked (recursively)."""
    if isinstance(value, dict):
        return {key: mask_secret(item) if isinstance(item, str) and _is_secret_key(key) and not _is_mask(item)
                else redact(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact(item) for item in value]
    return _mask_url(value) if isinstance(value, str) and _userinfo(value) else value


def secret_values(value: Any) -> list[str]:
    """String values of secret-looking keys anywhere in ``value`` (at least 4 characters long)."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and _is_secret_key(key) and len(item) >= 4:
                found.append(item)
            elif isinstance(item, str) and _userinfo(item):
                found.extend(_credential_parts(item))
            else:
                found.extend(secret_values(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(_credential_parts(item) if isinstance(item, str) and _userinfo(item) else secret_values(item))
    return found


def _credential_parts(url: str) -> list[str]:
    """The userinfo of ``url`` and its password (what a message quoting the URL must not show)."""
    userinfo = _userinfo(url) or ""
    password = userinfo.partition(":")[2]
    return [part for part in (userinfo, password) if len(part) >= 4]


def scrub(text: str, secrets: Iterable[str]) -> str:
    """Replace each secret in ``text`` by its mask (longest first)."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret and secret in text:
            text = text.replace(secret, mask_secret(secret))
    return text


def withhold_secrets(body: dict[str, Any]) -> tuple[dict[str, Any], Withheld]:
    """``(body with every secret masked, the secrets by position)``; the first is safe to store and serve."""
    withheld: Withheld = {}

    def walk(node: Any, path: tuple[str | int, ...]) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, item in node.items():
                if isinstance(item, str) and item and _is_secret_key(key) and not _is_mask(item):
                    withheld[(*path, key)] = item
                    out[key] = mask_secret(item)
                else:
                    out[key] = walk(item, (*path, key))
            return out
        if isinstance(node, list):
            return [walk(item, (*path, index)) for index, item in enumerate(node)]
        if isinstance(node, str) and _userinfo(node):
            withheld[path] = node
            return _mask_url(node)
        return node

    return walk(body, ()), withheld


def restore_secrets(body: dict[str, Any], withheld: Withheld | None) -> dict[str, Any]:
    """The body an executor runs: withheld secrets put back; masks without a secret (lost in a restart) dropped."""
    secrets = withheld or {}

    def walk(node: Any, path: tuple[str | int, ...]) -> Any:
        if path and path in secrets:
            return secrets[path]
        if isinstance(node, dict):
            out = {}
            for key, item in node.items():
                here = (*path, key)
                if here in secrets:
                    out[key] = secrets[here]
                elif not (isinstance(item, str) and _is_secret_key(key) and _is_mask(item)):
                    out[key] = walk(item, here)
            return out
        if isinstance(node, list):
            return [walk(item, (*path, index)) for index, item in enumerate(node)]
        return node

    restored: dict[str, Any] = walk(body, ())
    return restored


def _is_mask(value: str) -> bool:
    return value.startswith(_MASK_PREFIX)
