"""Reading Synth chat JSONL (``{"messages": [{role, content}, ...]}``) for local SFT; torch-free.

The executor calls this before it starts a worker, so an empty file or a file where every line is invalid
fails the job in milliseconds with the line numbers, instead of after a 5-second torch import.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth_nb.local.errors import ChatDataError

__all__ = ["ChatDataset", "load_chat_jsonl"]

_MAX_REPORTED = 5


@dataclass
class ChatDataset:
    examples: list[list[dict[str, Any]]]
    total_lines: int
    #: (line number, reason) for every skipped line
    skipped: list[tuple[int, str]] = field(default_factory=list)

    def skipped_summary(self) -> str:
        shown = "; ".join(f"line {n}: {why}" for n, why in self.skipped[:_MAX_REPORTED])
        more = f" (+{len(self.skipped) - _MAX_REPORTED} more)" if len(self.skipped) > _MAX_REPORTED else ""
        return shown + more


def _problem(record: Any) -> str | None:
    """Why a parsed line cannot be trained on, or None when it is fine."""
    if not isinstance(record, dict):
        return "record is not an object"
    messages = record.get("messages")
    if not isinstance(messages, list) or not messages:
        return "missing messages[] with at least 1 turn"
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            return f"message {i} is not an object"
        role = message.get("role")
        if not isinstance(role, str) or not role.strip():
            return f"message {i} has invalid role"
        content = message.get("content")
        if content is not None and not isinstance(content, str | list | dict):
            return f"message {i} has unsupported content type {type(content).__name__}"
    if not any(m.get("role") == "assistant" and m.get("content") for m in messages):
        return "no assistant message with content (nothing to learn)"
    return None


def load_chat_jsonl(path: Path, *, label: str = "training file") -> ChatDataset:
    """Parse ``path``; skip bad lines (recorded in ``skipped``); raise ChatDataError when none is usable."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ChatDataError(f"{label} {Path(path).name}: cannot read it ({exc})") from exc
    examples: list[list[dict[str, Any]]] = []
    skipped: list[tuple[int, str]] = []
    total = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        total += 1
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            skipped.append((number, f"invalid JSON ({exc.msg})"))
            continue
        problem = _problem(record)
        if problem:
            skipped.append((number, problem))
        else:
            examples.append(record["messages"])
    data = ChatDataset(examples=examples, total_lines=total, skipped=skipped)
    if total == 0:
        raise ChatDataError(f"{label} {Path(path).name} contains no SFT examples (the file is empty); "
                            "upload a JSONL file with one {\"messages\": [...]} object per line")
    if not examples:
        raise ChatDataError(f"{label} {Path(path).name}: none of its {total} lines is a usable chat example "
                            f"({data.skipped_summary()})")
    return data
