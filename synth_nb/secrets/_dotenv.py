"""``.env`` files as a secrets source (python-dotenv syntax), with file:line errors.

python-dotenv only logs unparsable lines; a silently skipped ``SYNTH_API_KEY=...`` line is exactly the
kind of mistake that costs an afternoon, so every unparsable line is an error here, and so is a key
synth-nb reads written without ``=``, and so is a key that is no variable name (``MY KEY=1``). Every
error names the file (and the line when there is one) and never quotes the line's content.

Only a regular file is read (``--env-file /dev/zero`` or a FIFO would be read forever), of at most
``MAX_BYTES`` and ``MAX_LINES``: python-dotenv's parser takes time quadratic in the line count.
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from synth_nb.errors import SecretsError

if TYPE_CHECKING:
    from dotenv.parser import Binding

__all__ = ["DotenvFile", "find_dotenv_upwards", "load_dotenv_file", "near_misses", "read_dotenv", "source_label"]

_FILENAME = ".env"
#: far above any real .env file (a few keys), far below what takes long to parse
MAX_BYTES = 1024 * 1024
MAX_LINES = 10_000
#: what a variable name may hold (python-dotenv accepts quoted keys with blanks in them)
_KEY = re.compile(r"[^\s=]+")


def source_label(path: Path) -> str:
    return f".env:{path}"


@dataclass(frozen=True)
class DotenvFile:
    """What one .env file holds: the non-empty values, and the keys written with an empty value."""

    path: Path
    values: dict[str, str] = field(default_factory=dict)
    #: key -> line of ``KEY=`` with nothing after it (the missing-key message points there)
    blank: dict[str, int] = field(default_factory=dict)
    #: every key the file sets (with a value or not) -> its line, for "did you mean" on a misspelt one
    lines: dict[str, int] = field(default_factory=dict)


def near_misses(file: DotenvFile, wanted: Collection[str]) -> dict[str, str]:
    """``{wanted key: "found NAME: did you mean KEY (in FILE line N)?"}`` for each key of ``file`` that is no
    key of ``wanted`` but close to one (``ENVIRONMENT_APIKEY``, ``synth_api_key``), as TOML keys get."""
    from difflib import get_close_matches  # why here: as python-dotenv, only once a .env file was read

    out: dict[str, str] = {}
    by_upper = {k.upper(): k for k in wanted}
    for name, line in file.lines.items():
        if name in wanted:
            continue
        close = get_close_matches(name.upper(), list(by_upper), n=1, cutoff=0.85)
        if close and by_upper[close[0]] not in out:
            key = by_upper[close[0]]
            out[key] = f"found {name}: did you mean {key} (in {file.path} line {line})?"
    return out


def absolute(path: Path) -> Path:
    """``path`` made absolute, symlinks resolved when they can be (a symlink loop is left for the read)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def read_dotenv(path: str | Path) -> dict[str, str]:
    """All ``KEY=VALUE`` pairs of a .env file (empty values dropped); see ``load_dotenv_file``."""
    return load_dotenv_file(path).values


def load_dotenv_file(path: str | Path, known_keys: Collection[str] = ()) -> DotenvFile:
    """Read and check a .env file.

    Raises ``SecretsError`` (with file and line, never the line's content) when the file is missing or
    unreadable, not UTF-8 text, has a line python-dotenv cannot parse, or writes one of ``known_keys``
    without ``=``.
    """
    # python-dotenv is imported once a file is read (26 ms of CPU): looking for a .env that is not there, as
    # ``synth-nb cancel`` does in most folders, needs none of it (``benchmarks/cli_start.py``)
    from dotenv import dotenv_values
    from dotenv.parser import parse_stream

    path = Path(path)
    text = _decode(path, _read_bytes(path))
    if text.count("\n") > MAX_LINES:
        raise SecretsError(f"{path}: env file has more than {MAX_LINES} lines; is it a .env file? "
                           "(one KEY=VALUE per line)")
    bindings = list(parse_stream(io.StringIO(text)))
    bad = [_line(b) for b in bindings if b.error or (b.key is not None and not _KEY.fullmatch(b.key))]
    if bad:
        lines = ", ".join(str(n) for n in bad[:10]) + (" ..." if len(bad) > 10 else "")
        raise SecretsError(
            f"{path}:{bad[0]}: cannot parse env file line(s) {lines}; expected KEY=VALUE "
            "(quote values that contain spaces or '#')"
        )
    for binding in bindings:
        if binding.key in known_keys and binding.value is None:
            raise SecretsError(f"{path}:{_line(binding)}: {binding.key} has no '=' and so no value "
                               f"(write {binding.key}=VALUE)")
    blank = {b.key: _line(b) for b in bindings if b.key and b.value is not None and not b.value.strip()}
    values = dotenv_values(stream=io.StringIO(text), interpolate=True)
    found = {k: v.strip() for k, v in values.items() if v is not None and v.strip()}
    written = {b.key: _line(b) for b in bindings if b.key}
    return DotenvFile(path, found, {k: line for k, line in blank.items() if k not in found}, written)


def _line(binding: Binding) -> int:
    """The line a binding is written on (python-dotenv counts from the blank lines before it)."""
    text = binding.original.string
    return binding.original.line + text[: len(text) - len(text.lstrip())].count("\n")


def _read_bytes(path: Path) -> bytes:
    """The file's bytes: a regular file of at most ``MAX_BYTES`` (opened without blocking on a FIFO)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise SecretsError(f"env file not found: {path} (check the --env-file path)") from None
    except IsADirectoryError:
        raise SecretsError(f"env file {path} is a folder, not a file (pass the .env file inside it)") from None
    except OSError as exc:
        raise SecretsError(f"cannot read env file {path}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise SecretsError(f"env file {path} is a folder, not a file (pass the .env file inside it)")
        raise SecretsError(f"env file {path} is not a regular file (a device, FIFO or socket); "
                           "pass a .env text file")
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(MAX_BYTES + 1)
        except OSError as exc:
            raise SecretsError(f"cannot read env file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise SecretsError(f"env file {path} is larger than {MAX_BYTES // 1024} KiB; is it a .env file? "
                           "(one KEY=VALUE per line)")
    return data


def _decode(path: Path, data: bytes) -> str:
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise SecretsError(f"{path}:{line}: env file contains a NUL byte; is it a binary file? "
                           "(a .env file is text, one KEY=VALUE per line)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SecretsError(
            f"{path}:{line}: env file is not valid UTF-8 (byte 0x{data[exc.start]:02x}); save it as UTF-8"
        ) from None


def find_dotenv_upwards(start: str | Path) -> Path | None:
    """The nearest ``.env`` file in ``start`` or one of its parents."""
    folder = absolute(Path(start))
    if folder.is_file():
        folder = folder.parent
    for candidate_dir in (folder, *folder.parents):
        candidate = candidate_dir / _FILENAME
        if candidate.is_file():
            return candidate
    return None
