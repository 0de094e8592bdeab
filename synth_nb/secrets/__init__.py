"""Secrets: resolution from --env-file / Modal / environment / .env, held as SecretStr, always masked.

Precedence (highest first): ``--env-file`` files in the order given, ``--modal-secret`` secrets in the
order given, the process environment, the nearest ``.env`` above the config, the nearest ``.env`` above
the working directory. See ``synth_nb.secrets._resolve``.
"""

from synth_nb.secrets._bundle import ResolvedSecret, ResolvedSetting, SecretBundle, missing_keys_error
from synth_nb.secrets._keys import ENVIRONMENT_API_KEY, SECRET_KEYS, SETTING_KEYS, SYNTH_API_KEY
from synth_nb.secrets._mask import mask, mask_text, mask_userinfo
from synth_nb.secrets._resolve import resolve_secrets

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
]
