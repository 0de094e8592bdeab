from __future__ import annotations

import json

import pytest

from synth_nb.local.errors import ChatDataError
from synth_nb.local.training.chat_data import load_chat_jsonl

GOOD = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}


def test_good_lines_are_kept_and_bad_lines_reported_with_line_numbers(tmp_path):
    path = tmp_path / "train.jsonl"
    path.write_text("\n".join([json.dumps(GOOD), "{not json", "", json.dumps({"messages": []}),
                               json.dumps({"messages": [{"role": "user", "content": "no reply"}]}),
                               json.dumps(GOOD)]) + "\n")
    data = load_chat_jsonl(path)
    assert len(data.examples) == 2
    assert data.total_lines == 5
    assert [n for n, _ in data.skipped] == [2, 4, 5]
    assert "invalid JSON" in data.skipped[0][1]
    assert "no assistant message" in data.skipped[2][1]
    assert "line 2" in data.skipped_summary()


def test_empty_file_is_rejected(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")
    with pytest.raises(ChatDataError, match="no SFT examples"):
        load_chat_jsonl(path)


def test_file_where_every_line_is_invalid_is_rejected_with_reasons(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"oops": 1}\n[1, 2]\n{"messages": [{"role": "", "content": "x"}]}\n')
    with pytest.raises(ChatDataError) as info:
        load_chat_jsonl(path)
    message = str(info.value)
    assert "none of its 3 lines" in message
    assert "line 1: missing messages" in message
    assert "line 2: record is not an object" in message
    assert "line 3: message 0 has invalid role" in message


def test_unreadable_file_is_a_data_error(tmp_path):
    path = tmp_path / "binary.jsonl"
    path.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ChatDataError, match="cannot read"):
        load_chat_jsonl(path)
