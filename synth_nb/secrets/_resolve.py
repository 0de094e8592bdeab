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

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import SecretStr

from synth_nb.secrets import _dotenv, _env, _modal
from synth_nb.secrets._bundle import ResolvedSecret, ResolvedSetting, SecretBundle
from synth_nb.secrets._keys import SECRET_KEYS, SETTING_KEYS

__all__ = ["resolve_secrets"]


def _sources(
    *,
    config_path: str | Path | None,
    env_files: Sequence[str | Path],
    modal_secrets: Sequence[str],
    environ: Mapping[str, str] | None,
    cwd: str | Path | None,
    keys: Iterable[str],
) -> tuple[list[tuple[str, dict[str, str]]], list[str]]:
    keys = tuple(keys)
    sources: list[tuple[str, dict[str, str]]] = []
    notes: list[str] = []
    for env_file in env_files:
        path = Path(env_file).expanduser()
        sources.append((_dotenv.source_label(path.resolve()), _dotenv.read_dotenv(path)))
    for name in modal_secrets:
        sources.append((_modal.source_label(name), _modal.read_modal_secret(name, keys)))
    sources.append((_env.SOURCE, _env.read_environment(keys, environ)))
    seen: set[Path] = set()
    starts = [Path(config_path).expanduser().resolve().parent] if config_path is not None else []
    starts.append(Path(cwd) if cwd is not None else Path.cwd())
    for start in starts:
        found = _dotenv.find_dotenv_upwards(start)
        if found is not None and found not in seen:
            seen.add(found)
            sources.append((_dotenv.source_label(found), _dotenv.read_dotenv(found)))
            notes.append(f"read {found}")
    return sources, notes


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
    sources, notes = _sources(config_path=config_path, env_files=env_files or (),
                              modal_secrets=modal_secrets or (), environ=environ, cwd=cwd, keys=wanted)
    secrets: dict[str, ResolvedSecret] = {}
    settings: dict[str, ResolvedSetting] = {}
    for label, values in sources:
        for key in SECRET_KEYS:
            if key not in secrets and key in values:
                secrets[key] = ResolvedSecret(key, SecretStr(values[key]), label)
        for key in SETTING_KEYS:
            if key not in settings and key in values:
                settings[key] = ResolvedSetting(key, values[key], label)
    return SecretBundle(secrets=secrets, settings=settings, notes=tuple(notes))
