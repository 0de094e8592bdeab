"""SFT JSONL validation: every problem with line and field, first 20 listed, streamed for big files."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from synth_nb.errors import DatasetError
from synth_nb.flows.sft.dataset import MAX_LISTED_PROBLEMS, validate_jsonl

GOOD = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}


def _write(path: Path, lines: list[object | str | bytes]) -> Path:
    with path.open("wb") as fh:
        for line in lines:
            if isinstance(line, bytes):
                fh.write(line + b"\n")
            elif isinstance(line, str):
                fh.write(line.encode() + b"\n")
            else:
                fh.write(json.dumps(line).encode() + b"\n")
    return path


def test_valid_file_reports_counts(tmp_path: Path) -> None:
    tool = {"messages": [{"role": "user", "content": "weather?"},
                         {"role": "assistant", "content": None,
                          "tool_calls": [{"id": "1", "type": "function",
                                          "function": {"name": "get_weather", "arguments": "{\"city\": \"x\"}"}}]},
                         {"role": "tool", "tool_call_id": "1", "content": "sunny"},
                         {"role": "assistant", "content": "It is sunny."}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]}
    image = {"messages": [{"role": "user", "content": [{"type": "text", "text": "what is it?"},
                                                       {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}}]},
                          {"role": "assistant", "content": "a cat"}]}
    report = validate_jsonl(_write(tmp_path / "d.jsonl", [GOOD, "", tool, image]))
    assert report.ok and report.examples == 3
    assert report.examples_with_tools == 1 and report.examples_with_images == 1
    assert report.raise_for_problems() is report
    assert "3 valid examples" in report.summary()


def test_each_problem_has_line_and_field(tmp_path: Path) -> None:
    lines: list[object | str | bytes] = [
        GOOD,
        "{not json",
        [1, 2],
        {"prompt": "x"},
        {"messages": [{"role": "human", "content": "hi"}, {"role": "assistant", "content": "yo"}]},
        {"messages": [{"role": "user", "content": ""}, {"role": "assistant", "content": "yo"}]},
        {"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [{"function": {"arguments": "{"}}]}]},
        {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": ""}}]},
                      {"role": "assistant", "content": "?"}]},
        b'{"messages": [{"role": "user", "content": "caf\xe9"}]}',
        {"messages": [{"role": "user", "content": "only a question"}]},
    ]
    report = validate_jsonl(_write(tmp_path / "d.jsonl", lines))
    found = {(p.line, p.field) for p in report.problems}
    assert (2, "") in found  # bad JSON
    assert (3, "") in found  # not an object
    assert (4, "messages") in found
    assert (5, "messages[0].role") in found
    assert (6, "messages[0].content") in found
    assert (7, "messages[1].tool_calls[0].function.name") in found
    assert (7, "messages[1].tool_calls[0].function.arguments") in found
    assert (8, "messages[0].content[0]") in found
    assert (9, "") in found and "UTF-8" in next(p.message for p in report.problems if p.line == 9)
    assert (10, "messages") in found  # no assistant turn
    with pytest.raises(DatasetError) as err:
        report.raise_for_problems()
    text = str(err.value)
    assert f"{tmp_path / 'd.jsonl'}:2" in text and "[messages[0].role]" in text


def test_only_first_twenty_problems_listed_plus_count(tmp_path: Path) -> None:
    report = validate_jsonl(_write(tmp_path / "d.jsonl", ["{bad"] * 45))
    assert report.problem_count == 45 and len(report.problems) == MAX_LISTED_PROBLEMS
    with pytest.raises(DatasetError, match="45 problem.*showing the first 20; 25 more"):
        report.raise_for_problems()


def test_limit_checks_only_the_first_examples(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.jsonl", [GOOD, "", GOOD, "{bad"])
    assert validate_jsonl(path, limit=2).ok
    assert not validate_jsonl(path).ok
    with pytest.raises(DatasetError, match="positive"):
        validate_jsonl(path, limit=0)


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found"):
        validate_jsonl(tmp_path / "missing.jsonl")
    empty = _write(tmp_path / "empty.jsonl", ["", "  "])
    with pytest.raises(DatasetError, match="no examples"):
        validate_jsonl(empty).raise_for_problems()


def test_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\n")
    assert validate_jsonl(path).ok


def test_memory_stays_flat_on_a_large_file(tmp_path: Path) -> None:
    """~60 MB of JSONL is validated with a small, size-independent peak allocation."""
    line = (json.dumps({"messages": [{"role": "user", "content": "q" * 3000},
                                     {"role": "assistant", "content": "a" * 3000}]}) + "\n").encode()
    path = tmp_path / "big.jsonl"
    count = 60_000_000 // len(line)
    with path.open("wb") as fh:
        for _ in range(count // 1000):
            fh.write(line * 1000)
    tracemalloc.start()
    try:
        report = validate_jsonl(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.ok and report.examples == (count // 1000) * 1000
    assert peak < 2_000_000, peak  # a few lines' worth, not the file (60 MB)


@pytest.mark.parametrize("role", ["wizard", "developer", "function", "USER", "", None, 3])
def test_only_system_user_assistant_and_tool_roles(tmp_path: Path, role: object) -> None:
    bad = {"messages": [{"role": role, "content": "hi"}, {"role": "assistant", "content": "yo"}]}
    report = validate_jsonl(_write(tmp_path / "d.jsonl", [GOOD, GOOD, bad]))
    (problem,) = report.problems
    assert (problem.line, problem.field) == (3, "messages[0].role")
    assert "assistant, system, tool, user" in problem.message


def test_a_secret_written_as_a_role_is_not_echoed(tmp_path: Path) -> None:
    key = "sk_synth_0123456789abcdef0123456789"
    bad = {"messages": [{"role": key, "content": "hi"}, {"role": "assistant", "content": "yo"}]}
    report = validate_jsonl(_write(tmp_path / "d.jsonl", [bad]))
    assert key not in str(report.problems[0]) and "6789" in str(report.problems[0])


@pytest.mark.parametrize("depth", [600, 100_000])
def test_deeply_nested_json_is_a_problem_of_its_line(tmp_path: Path, depth: int) -> None:
    deep = '{"messages": ' + "[" * depth + "]" * depth + "}"
    path = _write(tmp_path / "d.jsonl", [GOOD, deep, GOOD])
    report = validate_jsonl(path)
    assert report.problems and {p.line for p in report.problems} == {2}
    with pytest.raises(DatasetError) as info:
        report.raise_for_problems()
    assert "d.jsonl:2" in str(info.value)
