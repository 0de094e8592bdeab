"""Lay out a masked plan preview so a person can check it: folded seed lists, one line per request.

A GEPA payload lists every seed on its own line (441 lines for the bundled config); long integer lists
fold into one summary ("80 seeds: 0…79") that the wizard can expand. Upload steps name the local file
and its size, which the JSON body cannot say. Everything here starts from ``plan.preview()`` (masked).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synth_nb.plan import Plan

__all__ = ["LONG_LIST", "fold_summary", "human_size", "payload_lines", "payload_text", "step_line", "step_rows"]

#: integer lists longer than this fold into a one-line summary
LONG_LIST = 10
_FOLD = re.compile(r'"\\u0000fold(\d+)\\u0000"')


def fold_summary(key: str, values: Sequence[int]) -> str:
    """``"80 seeds: 0…79"`` for a run of consecutive numbers, else the first three and the last."""
    noun = "seeds" if re.search(r"seed|pool", key, re.I) else "numbers"
    head = f"{len(values)} {noun}: "
    if all(b - a == 1 for a, b in zip(values, values[1:], strict=False)):
        return f"{head}{values[0]}…{values[-1]}"
    return head + ", ".join(str(v) for v in values[:3]) + f", …, {values[-1]}"


def _is_long_int_list(value: Any) -> bool:
    return (isinstance(value, list) and len(value) > LONG_LIST
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value))


def _with_placeholders(value: Any, key: str, folds: list[tuple[str, list[int]]]) -> Any:
    if isinstance(value, Mapping):
        return {k: _with_placeholders(v, str(k), folds) for k, v in value.items()}
    if _is_long_int_list(value):
        folds.append((key, list(value)))
        return f"\x00fold{len(folds) - 1}\x00"
    if isinstance(value, list):
        return [_with_placeholders(v, key, folds) for v in value]
    return value


def payload_lines(preview: Mapping[str, Any]) -> list[dict[str, str]]:
    """The preview as indented JSON lines; a line holding a long integer list is split around it.

    Each line is ``{"text": …}``, or ``{"text": before, "fold": summary, "full": "[0, 1, …]", "after": …}``.
    """
    folds: list[tuple[str, list[int]]] = []
    text = json.dumps(_with_placeholders(preview, "", folds), indent=2, ensure_ascii=False)
    lines: list[dict[str, str]] = []
    for line in text.splitlines():
        match = _FOLD.search(line)
        if match is None:
            lines.append({"text": line})
            continue
        key, values = folds[int(match.group(1))]
        lines.append({"text": line[:match.start()], "fold": fold_summary(key, values),
                      "full": json.dumps(values), "after": line[match.end():]})
    return lines


def payload_text(lines: Sequence[Mapping[str, str]]) -> str:
    """``payload_lines`` as plain text, each long integer list shown as ``[80 seeds: 0…79]``."""
    return "\n".join(line["text"] + (f"[{line['fold']}]" + line["after"] if "fold" in line else "")
                      for line in lines)


def human_size(size: int) -> str:
    """``512 B``, ``1.2 KiB``, ``3.4 MiB``."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover - the loop always returns


def _shown_path(path: Path, folder: Path | None) -> str:
    if folder is None:
        return path.name
    try:
        return os.path.relpath(path.resolve(), folder.resolve())
    except ValueError:  # another drive (Windows)
        return str(path)


def step_rows(plan: Plan, folder: Path | None = None) -> list[dict[str, Any]]:
    """One row per request: ``method``, ``path``, ``what`` it does; uploads add ``file``, ``size``, ``limit``."""
    rows: list[dict[str, Any]] = []
    for step in plan.steps:
        row: dict[str, Any] = {"method": step.method, "path": step.path, "what": step.description}
        if step.kind == "upload" and step.upload is not None:
            row["file"] = _shown_path(step.upload, folder)
            try:
                row["size"] = human_size(step.upload.stat().st_size)
            except OSError:
                row["size"] = "file not found"
            limit = step.body.get("limit_lines") if isinstance(step.body, Mapping) else None
            if limit is not None:
                row["limit"] = int(limit)
        rows.append(row)
    return rows


def step_line(row: Mapping[str, Any]) -> str:
    """``POST /files: uploads train.jsonl (512 B), first 2 lines — upload training data; …``."""
    text = f"{row['method']} {row['path']}"
    if "file" in row:
        text += f": uploads {row['file']} ({row['size']})"
        if "limit" in row:
            text += f", first {row['limit']} lines"
    return text + (f" — {row['what']}" if row.get("what") else "")
