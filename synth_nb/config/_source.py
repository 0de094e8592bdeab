"""Read a TOML file into a dict and remember where every key was written.

``tomllib`` gives no positions, so :class:`KeyLines` re-scans the (already valid) text for table
headers, ``[[arrays]]``, dotted keys, inline tables and array elements, so errors can name a line.
"""

from __future__ import annotations

import bisect
import contextlib
import re
import tomllib
from pathlib import Path
from typing import Any

from synth_nb.errors import ConfigError

__all__ = ["KeyLines", "deep_nesting_line", "format_key", "parse_key_path", "parse_toml_text", "read_toml_file"]

KeyPath = tuple[str | int, ...]

_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def read_toml_file(path: Path) -> tuple[str, dict[str, Any]]:
    """Return ``(text, data)``; every failure is a :class:`ConfigError` naming the file."""
    if not path.exists():
        raise ConfigError("config file not found", path=path, hint="check the path or pass --config")
    if not path.is_file():
        raise ConfigError("not a file", path=path, hint="pass the path of a .toml file")
    if path.suffix != ".toml":
        raise ConfigError("not a .toml file", path=path, hint="training configs are TOML files ending in .toml")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise ConfigError(
            f"file is not valid UTF-8 (byte 0x{data[exc.start]:02x})", path=path, line=line, column=column,
            hint="TOML files must be UTF-8; re-save the file with UTF-8 encoding",
        ) from None
    return text, parse_toml_text(text, path)


def parse_toml_text(text: str, path: Path | None = None) -> dict[str, Any]:
    """Parse TOML text; a syntax error becomes a :class:`ConfigError` with line and column."""
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return tomllib.loads(text)
    except RecursionError:
        line = deep_nesting_line(text)
        raise ConfigError("arrays or inline tables are nested too deeply to read", path=path, line=line,
                          hint="flatten the nested [ ] / { } values") from None
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        line = getattr(exc, "lineno", None)
        column = getattr(exc, "colno", None)
        found = _TOML_POS.search(message)
        if found and line is None:
            line, column = int(found.group(1)), int(found.group(2))
        if line is None and "end of document" in message:
            line = text.count("\n") + 1
            column = len(text) - (text.rfind("\n") + 1) + 1
        detail = _TOML_POS.sub("", message).replace("(at end of document)", "").strip()
        raise ConfigError(f"invalid TOML: {detail}", path=path, line=line, column=column,
                          hint=_syntax_hint(detail)) from None


def deep_nesting_line(text: str, limit: int = 64) -> int | None:
    """The line where ``[`` / ``{`` brackets first nest deeper than ``limit`` (strings and comments skipped)."""
    depth, line, quote, i, n = 0, 1, "", 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
        elif quote:
            if ch == "\\" and quote == '"':
                i += 1
                line += text[i : i + 1] == "\n"
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            while i + 1 < n and text[i + 1] != "\n":
                i += 1
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return line
        elif ch in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return None


def _syntax_hint(detail: str) -> str:
    lowered = detail.lower()
    if "overwrite" in lowered or "declare" in lowered:
        return "this key or table is defined twice; keep one definition"
    if "inline table" in lowered or "key part" in lowered:
        return "an inline table { ... } must fit on one line; use a [table] header for longer ones"
    if "unterminated" in lowered or "unclosed" in lowered or "closing" in lowered:
        return "a string, array or table opened earlier is not closed"
    return "fix the TOML syntax at that position"


def parse_key_path(dotted: str | KeyPath) -> KeyPath:
    """``"a.b[2].c"`` / ``"a.b.2.c"`` / ``'a."x.y"'`` -> ``("a", "b", 2, "c")``."""
    if isinstance(dotted, tuple):
        return dotted
    parts: list[str | int] = []
    i, n = 0, len(dotted)
    while i < n:
        ch = dotted[i]
        if ch in "\"'":
            end = dotted.find(ch, i + 1)
            end = n if end < 0 else end
            parts.append(dotted[i + 1 : end])
            i = end + 1
        elif ch == "[":
            end = dotted.find("]", i)
            end = n if end < 0 else end
            token = dotted[i + 1 : end]
            parts.append(int(token) if token.isdigit() else token)
            i = end + 1
        elif ch == ".":
            i += 1
        else:
            j = i
            while j < n and dotted[j] not in ".[":
                j += 1
            token = dotted[i:j]
            parts.append(int(token) if token.isdigit() else token)
            i = j
    return tuple(parts)


def format_key(path: KeyPath) -> str:
    """``("a", "b", 2, "c")`` -> ``"a.b[2].c"`` (quotes keys that are not bare)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = part if _BARE_KEY.fullmatch(part) else '"' + part.replace('"', '\\"') + '"'
            out += ("." if out else "") + text
    return out


class KeyLines:
    """Line numbers of the keys, tables and array elements of a TOML text."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._newlines = [i for i, ch in enumerate(text) if ch == "\n"]
        self.lines: dict[KeyPath, int] = {}
        self._aot: dict[KeyPath, int] = {}
        # best effort: keep whatever was located before the scanner got confused
        with contextlib.suppress(IndexError, ValueError, RecursionError, tomllib.TOMLDecodeError):
            self._scan()

    def line_of(self, dotted: str | KeyPath, *, exact: bool = False) -> int | None:
        """Line of ``dotted``; unless ``exact``, fall back to its nearest enclosing key or table."""
        path = parse_key_path(dotted)
        while path:
            if path in self.lines:
                return self.lines[path]
            if exact:
                return None
            path = path[:-1]
        return None

    # -- scanner -----------------------------------------------------------------------------------
    def _line(self, pos: int) -> int:
        return bisect.bisect_left(self._newlines, pos) + 1

    def _record(self, path: KeyPath, pos: int) -> None:
        line = self._line(pos)
        for end in range(1, len(path) + 1):  # implicit parent tables start where first mentioned
            self.lines.setdefault(path[:end], line)

    def _skip_ws(self, i: int, newlines: bool) -> int:
        s = self._text
        while i < len(s):
            ch = s[i]
            if ch in " \t\r" or (newlines and ch == "\n"):
                i += 1
            elif ch == "#":
                while i < len(s) and s[i] != "\n":
                    i += 1
            else:
                break
        return i

    def _scan(self) -> None:
        s, i = self._text, 0
        table: KeyPath = ()
        while True:
            i = self._skip_ws(i, newlines=True)
            if i >= len(s):
                return
            start = i
            if s[i] == "[":
                is_array = s.startswith("[[", i)
                i += 2 if is_array else 1
                parts, i = self._key(i)
                i = self._skip_ws(i, newlines=False) + (2 if is_array else 1)
                table = self._resolve(parts)
                if is_array:
                    self._record(table, start)
                    self._aot[table] = self._aot.get(table, -1) + 1
                    table = (*table, self._aot[table])
                self._record(table, start)
            else:
                parts, i = self._key(i)
                i = self._skip_ws(i, newlines=False)
                if i >= len(s) or s[i] != "=":
                    raise ValueError("expected '='")
                self._record((*table, *parts), start)
                i = self._value(self._skip_ws(i + 1, newlines=False), (*table, *parts))

    def _resolve(self, parts: tuple[str, ...]) -> KeyPath:
        """Insert the current index of every array-of-tables the header passes through."""
        out: list[str | int] = []
        for n, part in enumerate(parts):
            out.append(part)
            index = self._aot.get(tuple(out))
            if index is not None and n < len(parts) - 1:
                out.append(index)
        return tuple(out)

    def _key(self, i: int) -> tuple[tuple[str, ...], int]:
        s = self._text
        parts: list[str] = []
        while True:
            i = self._skip_ws(i, newlines=False)
            if s[i] == '"':
                j = i + 1
                while s[j] != '"':
                    j += 2 if s[j] == "\\" else 1
                parts.append(tomllib.loads(f"k = {s[i:j + 1]}")["k"])
                i = j + 1
            elif s[i] == "'":
                j = s.index("'", i + 1)
                parts.append(s[i + 1 : j])
                i = j + 1
            else:
                found = _BARE_KEY.match(s, i)
                if not found:
                    raise ValueError("bad key")
                parts.append(found.group(0))
                i = found.end()
            i = self._skip_ws(i, newlines=False)
            if i < len(s) and s[i] == ".":
                i += 1
                continue
            return tuple(parts), i

    def _value(self, i: int, path: KeyPath) -> int:
        s = self._text
        for quote in ('"""', "'''"):
            if s.startswith(quote, i):
                j = i + 3
                while True:
                    j = s.index(quote, j)
                    if quote == "'''" or _unescaped(s, j):
                        break
                    j += 1
                j += 3
                while j < len(s) and s[j] == quote[0]:
                    j += 1
                return j
        ch = s[i]
        if ch == '"':
            j = i + 1
            while s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            return j + 1
        if ch == "'":
            return s.index("'", i + 1) + 1
        if ch == "[":
            return self._array(i + 1, path)
        if ch == "{":
            return self._inline_table(i + 1, path)
        while i < len(s) and s[i] not in ",]}\n#":
            i += 1
        return i

    def _array(self, i: int, path: KeyPath) -> int:
        s, index = self._text, 0
        while True:
            i = self._skip_ws(i, newlines=True)
            if s[i] == "]":
                return i + 1
            self._record((*path, index), i)
            end = self._value(i, (*path, index))
            if end <= i:
                raise ValueError("no progress")  # not valid TOML: give up rather than loop
            i = self._skip_ws(end, newlines=True)
            index += 1
            if s[i] == ",":
                i += 1

    def _inline_table(self, i: int, path: KeyPath) -> int:
        s = self._text
        while True:
            i = self._skip_ws(i, newlines=False)
            if s[i] == "}":
                return i + 1
            start = i
            parts, i = self._key(i)
            i = self._skip_ws(i, newlines=False) + 1  # '='
            self._record((*path, *parts), start)
            i = self._skip_ws(self._value(self._skip_ws(i, newlines=False), (*path, *parts)), newlines=False)
            if s[i] == ",":
                i += 1


def _unescaped(s: str, pos: int) -> bool:
    backslashes = 0
    while pos - 1 - backslashes >= 0 and s[pos - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 0
