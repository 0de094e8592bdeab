"""Values from outside (a backend's answers, a job id typed on a command line) made safe where they land.

A backend is a remote service: whatever it answers is input, like a config file. Three rules follow, each
one function here so every door applies the same one:

* text is made inert before a terminal shows it (``inert``): C0 and C1 control characters and the Unicode
  bidirectional overrides are shown escaped (``\\x1b``, ``\\u202e``), so an answer cannot set the window
  title, write the clipboard, clear the screen, move the cursor up to forge a line, or reorder what is read;
* a job id is a job id (``job_id_problem``): letters, digits, ``_``, ``-`` and ``.`` (not first), at most
  ``JOB_ID_MAX`` characters, what the hosted backend (``job_…``, ``pl_…`` + hex) and the embedded one issue;
* a path built from such a value stays in its folder (``contained``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from synth_nb.errors import BackendAnswerError

__all__ = ["JOB_ID_MAX", "contained", "inert", "inert_each", "inert_lines", "job_id_problem", "shown_id"]

#: the longest job id accepted (the hosted backend's are 20-24 characters)
JOB_ID_MAX = 128
_JOB_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")
#: beside C0: DEL, C1 controls, the bidi marks, embeddings, overrides and isolates, line/paragraph separators
_OTHERS = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_ANY_CONTROL = re.compile(f"[\x00-\x1f{_OTHERS}]")
#: the same but tab and line feed
_CONTROL_BUT_LINES = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHERS}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    # C0 as ``\x1b``; the rest as ``\u009b``, which inside a JSON string is the same character again
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}")


def inert(text: object) -> str:
    """``text`` as one line a terminal shows as written: every control character (line ends included) and
    bidi override shown escaped, e.g. ``\\x1b]0;title\\x07`` for an OSC 0 sequence."""
    text = text if isinstance(text, str) else str(text)
    return _ANY_CONTROL.sub(_escaped, text) if _ANY_CONTROL.search(text) else text


def inert_each(lines: Sequence[str]) -> Sequence[str]:
    """``inert`` of each of ``lines``, told by one search over them all when none holds a control character (a
    chunk of a million-event history: one call instead of thousands)."""
    if all(type(line) is str for line in lines) and _ANY_CONTROL.search("".join(lines)) is None:
        return lines
    return [inert(line) for line in lines]


def inert_lines(text: object) -> str:
    """Like ``inert``, but line ends and tabs are kept: for text of several lines built here, whose values
    from outside were made inert one by one (this is the net under them). JSON text stays valid JSON with
    the same values (its encoder already escaped C0; what is left is escaped as ``\\uXXXX``)."""
    text = text if isinstance(text, str) else str(text)
    return _CONTROL_BUT_LINES.sub(_escaped, text) if _CONTROL_BUT_LINES.search(text) else text


def shown_id(value: object, limit: int = 80) -> str:
    """A value offered as a job id, as a message may show it: inert, quoted, cut after ``limit`` characters."""
    text = value if isinstance(value, str) else repr(value)
    cut = f"{text[:limit]}… ({len(text):,} characters)" if len(text) > limit else text
    return f"'{inert(cut)}'"


def job_id_problem(value: object) -> str | None:
    """Why ``value`` is not a job id (None when it is one)."""
    if not isinstance(value, str):
        return f"a job id is a string, not {type(value).__name__}"
    if not value:
        return "a job id cannot be empty"
    if len(value) > JOB_ID_MAX:
        return f"a job id has at most {JOB_ID_MAX} characters, this one {len(value):,}"
    if value[0] == ".":
        return "a job id cannot start with '.'"
    if _JOB_ID.fullmatch(value) is None:
        bad = next(c for c in value if not (c.isascii() and (c.isalnum() or c in "_-.")))
        return (f"a job id holds only letters, digits, '_', '-' and '.', not {inert(repr(bad))}")
    return None


def contained(folder: Path, name: str) -> Path:
    """``folder / name``, when ``name`` (a job id, a file name made from one) is one plain name that keeps
    the path inside ``folder``; otherwise ``BackendAnswerError`` and nothing is written."""
    plain = (name not in ("", ".", "..") and "/" not in name and "\\" not in name and "\x00" not in name
             and _ANY_CONTROL.search(name) is None and len(name) <= 255)
    path = folder / name
    if not plain or path.parent != folder:
        raise BackendAnswerError(f"refusing to write {shown_id(name)} under {folder}: it is not one plain file "
                                 "name, so the path would leave that folder")
    return path
