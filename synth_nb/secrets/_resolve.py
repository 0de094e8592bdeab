"""``resolve_secrets``: one documented precedence for every key.

Highest first:

1. ``--env-file PATH`` files, in the order given (the first file that defines a key wins);
2. ``--modal-secret NAME`` secrets, in the order given (only when asked for);
3. the process environment;
4. the nearest ``.env`` walking up from the config's folder;
5. the nearest ``.env`` walking up from the working directory.

Explicit sources beat the environment because naming a file on the command line is the more specific
request; an exported variable still beats a ``.env`` that was merely found (as in synth-ai 0.2.24).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import SecretStr

from synth_nb.secrets._bundle import ResolvedSecret, ResolvedSetting, SecretBundle
from synth_nb.secrets._keys import SECRET_KEYS, SETTING_KEYS
from synth_nb.secrets._sources import read_sources

__all__ = ["resolve_secrets"]


def resolve_secrets(
    *,
    config_path: str | Path | None = None,
    env_files: Sequence[str | Path] = (),
    modal_secrets: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
) -> SecretBundle:
    """Collect every key synth-nb knows (``SECRET_KEYS`` and ``SETTING_KEYS``) with its source.

    Does not raise for missing keys (call ``.require(keys)`` with what the job's flow needs); raises
    ``SecretsError`` for unusable sources (unreadable or malformed .env files, an unreadable Modal secret).
    """
    wanted = (*SECRET_KEYS, *SETTING_KEYS)
    found = read_sources(config_path=config_path, env_files=env_files or (), modal_secrets=modal_secrets or (),
                         environ=environ, cwd=cwd, keys=wanted)
    secrets: dict[str, ResolvedSecret] = {}
    settings: dict[str, ResolvedSetting] = {}
    for label, values in found.sources:
        for key in SECRET_KEYS:
            if key not in secrets and key in values:
                secrets[key] = ResolvedSecret(key, SecretStr(values[key]), label)
        for key in SETTING_KEYS:
            if key not in settings and key in values:
                settings[key] = ResolvedSetting(key, values[key], label)
    return SecretBundle(secrets=secrets, settings=settings, notes=tuple(found.notes),
                        looked_in=tuple(found.looked_in), blank=found.blank, near=found.near)
