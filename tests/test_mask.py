"""The masking rule: at most the last 4 characters, and none for short values."""

from __future__ import annotations

from pydantic import SecretStr

from synth_nb.secrets import mask, mask_text


def test_long_value_shows_last_four_only() -> None:
    assert mask("sk-live-abcdefgh1a2b") == "••••1a2b"


def test_short_value_shows_nothing() -> None:
    assert mask("abcdefghijk") == "••••"  # 11 chars
    assert mask("") == "" and mask(None) == ""


def test_secretstr_is_unwrapped_only_to_mask() -> None:
    assert mask(SecretStr("0123456789abcdef")) == "••••cdef"


def test_mask_text_replaces_every_occurrence_longest_first() -> None:
    a, b = "canary-secret-0000AAAA", "canary-secret-0000AAAA-longer-BBBB"
    text = f"x {b} y {a} z"
    out = mask_text(text, [a, SecretStr(b)])
    assert a not in out and b not in out
    assert out == "x ••••BBBB y ••••AAAA z"
