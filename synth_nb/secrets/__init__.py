"""Secrets: resolution from --env-file / Modal / environment / .env, held as SecretStr, always masked.

Precedence (highest first): ``--env-file`` files in the order given, ``--modal-secret`` secrets in the
order given, the process environment, the nearest ``.env`` above the config, the nearest ``.env`` above
the working directory. See ``synth_nb.secrets._resolve``.
"""

from typing import TYPE_CHECKING

from synth_nb._lazy import exports
from synth_nb.secrets._keys import (
    ENVIRONMENT_API_KEY,
    SECRET_KEYS,
    SETTING_KEYS,
    SYNTH_API_KEY,
    missing_keys_error,
)

if TYPE_CHECKING:
    from synth_nb.secrets._bundle import ResolvedSecret, ResolvedSetting, SecretBundle
    from synth_nb.secrets._mask import mask, mask_text, mask_userinfo, secret_parts
    from synth_nb.secrets._resolve import resolve_secrets
    from synth_nb.secrets._sources import secret_values

#: public name -> its module, imported on first use (``synth_nb._lazy``): masking needs no ``.env`` reader, and
#: a command that only masks or parses flags (``synth-nb cancel --help``) does not import the resolution
_EXPORTS = {
    "ResolvedSecret": "synth_nb.secrets._bundle",
    "ResolvedSetting": "synth_nb.secrets._bundle",
    "SecretBundle": "synth_nb.secrets._bundle",
    "mask": "synth_nb.secrets._mask",
    "mask_text": "synth_nb.secrets._mask",
    "mask_userinfo": "synth_nb.secrets._mask",
    "secret_parts": "synth_nb.secrets._mask",
    "resolve_secrets": "synth_nb.secrets._resolve",
    "secret_values": "synth_nb.secrets._sources",
}
__getattr__ = exports(__name__, _EXPORTS)

__all__ = [
    "ENVIRONMENT_API_KEY",
    "SECRET_KEYS",
    "SETTING_KEYS",
    "SYNTH_API_KEY",
    "ResolvedSecret",
    "ResolvedSetting",
    "SecretBundle",
    "mask",
    "mask_text",
    "mask_userinfo",
    "missing_keys_error",
    "resolve_secrets",
    "secret_parts",
    "secret_values",
]
