"""``synth_nb.untrusted``: text made inert for a terminal, job ids checked, paths kept in their folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from synth_nb.errors import BackendAnswerError
from synth_nb.untrusted import JOB_ID_MAX, contained, inert, inert_each, inert_lines, job_id_problem, shown_id

#: what a terminal must never receive from a backend: C0 (but tab and line feed), DEL, C1, bidi controls
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize("text", [
    "\x1b]0;title\x07", "\x1b]52;c;cHduZWQ=\x07", "\x1b]8;;http://x\x07a\x1b]8;;\x07", "\x1b[2J", "\x1b[1A\x1b[2K",
    "\x1bP+q\x1b\\", "\x9b31m", "\u202eevil", "\u2066x\u2069", "a\x00b", "\x7f", "\u2028",
])
def test_every_control_sequence_is_shown_escaped(text: str) -> None:
    shown = inert(text)
    assert not RAW_CONTROL.search(shown) and "\n" not in shown
    assert shown.isprintable()


def test_escapes_read_like_python_for_c0_and_as_json_for_the_rest() -> None:
    assert inert("a\x1bb\nc\td\re") == "a\\x1bb\\nc\\td\\re"
    assert inert("\x9b\u202e\x7f") == "\\u009b\\u202e\\u007f"
    assert inert("plain text, ünïcödé, 日本語 ✓") == "plain text, ünïcödé, 日本語 ✓"


def test_inert_each_is_inert_of_each_line() -> None:
    plain = ["[1] a: b", "ünïcödé ✓"]
    assert inert_each(plain) is plain  # told by one search
    lines = [*plain, "a\x1b[2Jb", "c\nd", "\u202eevil"]
    assert inert_each(lines) == [inert(line) for line in lines]


def test_inert_lines_keeps_line_ends_and_tabs_and_json_stays_the_same_json() -> None:
    assert inert_lines("a\n\tb\x1b[2J\r") == "a\n\tb\\x1b[2J\\r"
    document = json.dumps({"message": "x\u202e\x9b\x7f\x1b", "n": [1]}, ensure_ascii=False, indent=2)
    assert json.loads(inert_lines(document)) == json.loads(document)
    assert not RAW_CONTROL.search(inert_lines(document))


@pytest.mark.parametrize("job_id", ["pl_9c58b711c2644083", "job_24faa0fdfdf648b9", "a", "A-b_c.d", "x" * JOB_ID_MAX,
                                    "job..1"])
def test_the_ids_backends_issue_are_job_ids(job_id: str) -> None:
    assert job_id_problem(job_id) is None


@pytest.mark.parametrize("job_id", ["", ".", "..", "../x", "../../../outside/x", "/abs", "a/b", "a\\b", ".hidden",
                                    "a\x00b", "a\x1bb", "a b", "x" * (JOB_ID_MAX + 1), "pl_é", "a\u202eb", "a\n"])
def test_anything_else_is_not(job_id: str) -> None:
    problem = job_id_problem(job_id)
    assert problem and not RAW_CONTROL.search(problem)


def test_shown_id_is_inert_quoted_and_short() -> None:
    assert shown_id("a\x1bb") == "'a\\x1bb'"
    long = shown_id("a" * 5000)
    assert len(long) < 120 and "5,000 characters" in long


def test_contained_keeps_a_plain_name_in_its_folder(tmp_path: Path) -> None:
    assert contained(tmp_path, "pl_1") == tmp_path / "pl_1"
    assert contained(tmp_path, "config.fork-pl_1.toml") == tmp_path / "config.fork-pl_1.toml"
    for name in ("", ".", "..", "../x", "/etc/passwd", "a/b", "a\x00", "a\x1b", "x" * 300):
        with pytest.raises(BackendAnswerError, match="refusing to write"):
            contained(tmp_path, name)
