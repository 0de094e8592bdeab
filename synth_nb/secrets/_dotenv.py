"""``.env`` files as a secrets source (python-dotenv syntax), with file:line errors.

python-dotenv only logs unparsable lines; a silently skipped ``SYNTH_API_KEY=...`` line is exactly the
kind of mistake that costs an afternoon, so every unparsable line is an error here.
"""

from __future__ import annotations

import io
from pathlib import Path

from dotenv import dotenv_values
from dotenv.parser import parse_stream

from synth_nb.errors import SecretsError

__all__ = ["find_dotenv_upwards", "read_dotenv", "source_label"]

_FILENAME = ".env"


def source_label(path: Path) -> str:
    return f".env:{path}"


def read_dotenv(path: str | Path) -> dict[str, str]:
    """All ``KEY=VALUE`` pairs of a .env file (empty values dropped).

    Raises ``SecretsError`` (with file and line, never the line's content) when the file is missing,
    not UTF-8, or has a line python-dotenv cannot parse.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SecretsError(f"env file not found: {path} (check the --env-file path)") from None
    except OSError as exc:
        raise SecretsError(f"cannot read env file {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SecretsError(
            f"{path}:{line}: env file is not valid UTF-8 (byte 0x{data[exc.start]:02x}); save it as UTF-8"
        ) from None
    bad = [b.original.line for b in parse_stream(io.StringIO(text)) if b.error]
    if bad:
        lines = ", ".join(str(n) for n in bad[:10]) + (" ..." if len(bad) > 10 else "")
        raise SecretsError(
            f"{path}:{bad[0]}: cannot parse env file line(s) {lines}; expected KEY=VALUE "
            "(quote values that contain spaces or '#')"
        )
    values = dotenv_values(stream=io.StringIO(text), interpolate=True)
    return {k: v.strip() for k, v in values.items() if v is not None and v.strip()}


def find_dotenv_upwards(start: str | Path) -> Path | None:
    """The nearest ``.env`` file in ``start`` or one of its parents."""
    folder = Path(start).resolve()
    if folder.is_file():
        folder = folder.parent
    for candidate_dir in (folder, *folder.parents):
        candidate = candidate_dir / _FILENAME
        if candidate.is_file():
            return candidate
    return None
