"""The sources of ``resolve_secrets``, read in its precedence (``synth_nb.secrets._resolve``), as plain values.

Apart from the ``SecretBundle`` they become, so that what needs the values alone (the keys ``synth-nb cancel``
sends and masks) imports no pydantic (``benchmarks/cli_start.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from synth_nb.errors import SecretsError
from synth_nb.secrets import _dotenv, _env, _modal
from synth_nb.secrets._keys import SECRET_KEYS, SETTING_KEYS

__all__ = ["read_sources", "secret_values"]


@dataclass
class _Found:
    """Every source read, highest precedence first, and what the missing-key message can point at."""

    sources: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    looked_in: list[str] = field(default_factory=list)
    blank: dict[str, str] = field(default_factory=dict)
    #: wanted key -> a misspelt name a .env file sets instead ("did you mean …")
    near: dict[str, str] = field(default_factory=dict)

    def add_file(self, file: _dotenv.DotenvFile, label_path: Path, wanted: Iterable[str] = ()) -> None:
        self.sources.append((_dotenv.source_label(label_path), file.values))
        self.looked_in.append(str(file.path))
        for key, line in file.blank.items():
            self.blank.setdefault(key, f"{file.path}:{line}")
        for key, hint in _dotenv.near_misses(file, tuple(wanted)).items():
            self.near.setdefault(key, hint)


def _env_file_path(env_file: str | Path) -> Path:
    if not str(env_file).strip():
        raise SecretsError("--env-file needs the path of a .env file (got an empty one)")
    try:
        return Path(env_file).expanduser()
    except RuntimeError:  # "~user/..." for a user that does not exist, or no home folder
        raise SecretsError(f"env file {env_file}: cannot expand '~' here; give the full path") from None


def _env_folders(start: str | Path, found: Path | None) -> list[Path]:
    """The ``.env`` folders (not files) the walk up from ``start`` passed before ``found`` (or the root)."""
    folder = _dotenv.absolute(Path(start))
    folders = []
    for above in (folder, *folder.parents):
        if found is not None and above == found.parent:
            break
        if (above / ".env").is_dir():
            folders.append(above / ".env")
    return folders


def read_sources(
    *,
    config_path: str | Path | None,
    env_files: Sequence[str | Path],
    modal_secrets: Sequence[str],
    environ: Mapping[str, str] | None,
    cwd: str | Path | None,
    keys: Iterable[str],
) -> _Found:
    keys = tuple(keys)
    found = _Found()
    for env_file in env_files:
        path = _env_file_path(env_file)
        found.add_file(_dotenv.load_dotenv_file(path, keys), _dotenv.absolute(path), keys)
    for name in modal_secrets:
        found.sources.append((_modal.source_label(name), _modal.read_modal_secret(name, keys)))
        found.looked_in.append(f"Modal secret {name}")
    found.sources.append((_env.SOURCE, _env.read_environment(keys, environ)))
    found.looked_in.append("the environment")
    seen: set[Path] = set()
    starts = [_dotenv.absolute(Path(config_path).expanduser()).parent] if config_path is not None else []
    starts.append(Path(cwd) if cwd is not None else Path.cwd())
    for start in starts:
        dotenv = _dotenv.find_dotenv_upwards(start)
        for folder in _env_folders(start, dotenv):  # skipped, but said: "put it in a .env file" would mislead
            if folder not in seen:
                seen.add(folder)
                found.looked_in.append(f"{folder} (a folder, not a file: skipped)")
                found.notes.append(f"{folder} is a folder, not a .env file: skipped")
        if dotenv is not None and dotenv not in seen:
            seen.add(dotenv)
            found.add_file(_dotenv.load_dotenv_file(dotenv, keys), dotenv, keys)
            found.notes.append(f"read {dotenv}")
    return found


def secret_values(*, env_files: Sequence[str | Path] = (), modal_secrets: Sequence[str] = (),
                  environ: Mapping[str, str] | None = None, cwd: str | Path | None = None) -> dict[str, str]:
    """Each secret key (``SECRET_KEYS``) found, with its value from the highest source that has it: the values
    ``resolve_secrets`` would resolve for no config (and the same sources refused), without their sources."""
    found = read_sources(config_path=None, env_files=env_files, modal_secrets=modal_secrets, environ=environ,
                         cwd=cwd, keys=(*SECRET_KEYS, *SETTING_KEYS))
    values: dict[str, str] = {}
    for _label, source in found.sources:
        for key in SECRET_KEYS:
            if key in source:
                values.setdefault(key, source[key])
    return values
