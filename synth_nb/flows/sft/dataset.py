"""SFT chat JSONL validation, streamed line by line so memory stays flat for large files.

Every problem carries its line number and the field it concerns (``messages[2].role``). The report keeps
the first 20 problems and counts the rest. Checks beyond synth-ai 0.2.24 (which accepts any role and any
content): roles must be system/user/assistant/tool, a message needs non-empty content
unless it carries tool calls, each example needs an assistant turn, tool-call arguments given as strings
must be JSON, and multimodal parts must be well formed. Lines must be UTF-8.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth_nb.errors import ConfigError, DatasetError
from synth_nb.secrets.redact import shown

__all__ = ["MAX_LISTED_PROBLEMS", "DatasetProblem", "DatasetReport", "validate_jsonl"]

MAX_LISTED_PROBLEMS = 20
ROLES = frozenset({"system", "user", "assistant", "tool"})
_TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
_IMAGE_PART_TYPES = frozenset({"image_url", "image", "input_image"})
_OPTIONAL_STRINGS = ("name", "reasoning", "raw_content")


@dataclass(frozen=True)
class DatasetProblem:
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" + (f" [{self.field}]" if self.field else "")
        return f"{where}: {self.message}"


@dataclass
class DatasetReport:
    """Outcome of ``validate_jsonl``; ``problems`` holds at most ``MAX_LISTED_PROBLEMS`` entries."""

    path: Path
    examples: int = 0
    lines_read: int = 0
    problem_count: int = 0
    problems: list[DatasetProblem] = field(default_factory=list)
    examples_with_images: int = 0
    examples_with_tools: int = 0
    #: ``limit`` given to validate_jsonl (only the first N examples were looked at)
    limit: int | None = None

    @property
    def ok(self) -> bool:
        return self.problem_count == 0 and self.examples > 0

    def summary(self) -> str:
        scope = f"first {self.limit} examples of " if self.limit is not None else ""
        if self.ok:
            extras = []
            if self.examples_with_tools:
                extras.append(f"{self.examples_with_tools} with tool calls")
            if self.examples_with_images:
                extras.append(f"{self.examples_with_images} with images")
            tail = f" ({', '.join(extras)})" if extras else ""
            return f"{scope}{self.path.name}: {self.examples} valid examples{tail}"
        return f"{scope}{self.path.name}: {self.problem_count} problem(s) in {self.examples} example(s)"

    def raise_for_problems(self) -> DatasetReport:
        """Raise ``DatasetError`` listing the first problems (with a count of the rest); return self."""
        if self.examples == 0 and self.problem_count == 0:
            raise DatasetError("the dataset contains no examples (one JSON object per line is expected)",
                               path=self.path, hint="see the SFT dataset format in the README")
        if self.problem_count:
            shown = len(self.problems)
            more = self.problem_count - shown
            head = f"{self.problem_count} problem(s) in the dataset"
            if more:
                head += f" (showing the first {shown}; {more} more not listed)"
            subs: list[ConfigError] = [DatasetError(p.message, path=self.path, key=p.field or None, line=p.line)
                                       for p in self.problems]
            raise DatasetError(head, path=self.path, problems=subs,
                               hint="each line must be {\"messages\": [{\"role\": ..., \"content\": ...}, ...]}")
        return self


class _Collector:
    def __init__(self, report: DatasetReport) -> None:
        self.report = report

    def add(self, line: int, field_name: str, message: str) -> None:
        self.report.problem_count += 1
        if len(self.report.problems) < MAX_LISTED_PROBLEMS:
            self.report.problems.append(DatasetProblem(line, field_name, message))

    def objects(self, items: list[Any], line: int, where: str,
                complaint: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(where[i], item)`` for each object of ``items``; any other item is reported as ``complaint``."""
        for i, item in enumerate(items):
            if isinstance(item, dict):
                yield f"{where}[{i}]", item
            else:
                self.add(line, f"{where}[{i}]", complaint)


def _check_content(content: Any, where: str, line: int, out: _Collector) -> tuple[bool, bool]:
    """Validate message content; return (has_content, has_image)."""
    if content is None:
        return False, False
    if isinstance(content, str):
        return bool(content.strip()), False
    parts = [content] if isinstance(content, dict) else content
    if not isinstance(parts, list):
        out.add(line, f"{where}.content", f"content must be a string or a list of parts, not {type(content).__name__}")
        return True, False
    has_text, has_image = False, False
    not_a_part = "content part must be an object with a 'type'"
    for pw, part in out.objects(parts, line, f"{where}.content", not_a_part):
        kind = part.get("type")
        if kind in _TEXT_PART_TYPES:
            if not isinstance(part.get("text"), str):
                out.add(line, f"{pw}.text", "text part needs a string 'text'")
            elif part["text"].strip():
                has_text = True
        elif kind in _IMAGE_PART_TYPES:
            has_image = True
            url = part.get("image_url", part.get("image"))
            if isinstance(url, dict):
                url = url.get("url")
            if not isinstance(url, str) or not url.strip():
                out.add(line, pw, "image part needs a non-empty URL or data URI ('image_url': {'url': ...})")
        else:
            out.add(line, f"{pw}.type", f"unknown content part type {kind!r} (use text or image_url)")
    return has_text or has_image, has_image


def _check_tool_calls(calls: Any, where: str, line: int, out: _Collector) -> bool:
    if not isinstance(calls, list):
        out.add(line, f"{where}.tool_calls", "tool_calls must be a list")
        return False
    for cw, call in out.objects(calls, line, f"{where}.tool_calls", "tool call must be an object"):
        fn: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else call
        name = fn.get("name")
        if not isinstance(name, str) or not name.strip():
            out.add(line, f"{cw}.function.name", "tool call is missing its function name")
        args = fn.get("arguments")
        if isinstance(args, str) and args.strip():
            try:
                json.loads(args)
            except ValueError:
                out.add(line, f"{cw}.function.arguments", "arguments string is not valid JSON")
    return bool(calls)


def _check_record(record: Any, line: int, out: _Collector, report: DatasetReport) -> None:
    if not isinstance(record, dict):
        out.add(line, "", f"each line must be a JSON object, not {type(record).__name__}")
        return
    messages = record.get("messages")
    if not isinstance(messages, list) or not messages:
        out.add(line, "messages", "missing 'messages' (a non-empty list of chat turns)")
        return
    has_assistant = has_image = has_tools = False
    not_a_message = "message must be an object with 'role' and 'content'"
    for where, msg in out.objects(messages, line, "messages", not_a_message):
        role = msg.get("role")
        if not isinstance(role, str) or role not in ROLES:
            out.add(line, f"{where}.role", f"invalid role {shown(role)} (use one of {', '.join(sorted(ROLES))})")
        has_assistant = has_assistant or role == "assistant"
        has_content, image = _check_content(msg.get("content"), where, line, out)
        has_image = has_image or image
        calls = msg.get("tool_calls")
        has_calls = calls is not None and _check_tool_calls(calls, where, line, out)
        has_tools = has_tools or has_calls
        if not has_content and not has_calls:
            out.add(line, f"{where}.content", "empty content (give text, image parts or tool_calls)")
        for key in _OPTIONAL_STRINGS:
            if key in msg and not isinstance(msg[key], str):
                out.add(line, f"{where}.{key}", f"{key} must be a string when present")
    if not has_assistant:
        out.add(line, "messages", "no assistant message: nothing to learn from this example")
    tools = record.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            out.add(line, "tools", "tools must be a list when present")
        else:
            for k, tool in enumerate(tools):
                fn = tool.get("function", tool) if isinstance(tool, dict) else None
                if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"].strip():
                    out.add(line, f"tools[{k}]", "tool must be an object with a non-empty 'name'")
    if "metadata" in record and not isinstance(record["metadata"], dict):
        out.add(line, "metadata", "metadata must be an object when present")
    report.examples_with_images += has_image
    report.examples_with_tools += has_tools


def validate_jsonl(path: str | Path, *, limit: int | None = None) -> DatasetReport:
    """Validate an SFT JSONL file, reading one line at a time.

    ``limit``: only the first ``limit`` non-blank lines (the examples ``--examples N`` would upload).
    Raises ``DatasetError`` only when the file cannot be read; problems are in the returned report
    (call ``report.raise_for_problems()``).
    """
    path = Path(path)
    if limit is not None and limit <= 0:
        raise DatasetError(f"--examples must be a positive number, got {limit}", path=path)
    report = DatasetReport(path=path, limit=limit)
    out = _Collector(report)
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise DatasetError("dataset file not found", path=path,
                           hint="check [job].data or pass --dataset PATH") from None
    except OSError as exc:
        raise DatasetError(f"cannot read dataset: {exc.strerror or exc}", path=path) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            report.lines_read = number
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            if limit is not None and report.examples >= limit:
                break
            report.examples += 1
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                out.add(number, "", f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})")
                continue
            try:
                record = json.loads(text)
            except ValueError as exc:
                out.add(number, "", f"invalid JSON ({getattr(exc, 'msg', exc)} at column {getattr(exc, 'colno', '?')})")
                continue
            except RecursionError:
                out.add(number, "", "JSON nested too deeply to read (an example is a flat list of messages)")
                continue
            _check_record(record, number, out, report)
    return report
