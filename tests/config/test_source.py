"""File reading, TOML syntax errors with positions, and the key -> line scanner."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synth_nb.config._source import KeyLines, format_key, parse_key_path, parse_toml_text, read_toml_file
from synth_nb.errors import ConfigError

from ._samples import FIXTURES


def test_syntax_error_reports_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[prompt_learning]\nalgorithm = "gepa"\nseeds = [1, 2\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_toml_file(path)
    err = info.value
    assert err.path == path and err.line is not None and err.column is not None
    assert str(err).startswith(f"{path}:{err.line}:{err.column}: invalid TOML")


def test_multiline_inline_table_like_the_shipped_broken_example() -> None:
    text = 'a = 1\nmodules = [{\n  id = "x"\n}]\n'
    with pytest.raises(ConfigError) as info:
        parse_toml_text(text, Path("x.toml"))
    assert (info.value.line, info.value.column) == (2, 13)
    assert "one line" in (info.value.hint or "")


def test_duplicate_key_hint() -> None:
    with pytest.raises(ConfigError) as info:
        parse_toml_text("[a]\nx = 1\nx = 2\n")
    assert info.value.line == 3 and "twice" in (info.value.hint or "")


def test_non_utf8_bytes_report_position(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[job]\nmodel = "caf\xe9"\n')
    with pytest.raises(ConfigError) as info:
        read_toml_file(path)
    assert (info.value.line, info.value.column) == (2, 13)
    assert "UTF-8" in info.value.message


def test_bom_is_tolerated() -> None:
    assert parse_toml_text("\ufeffa = 1\n") == {"a": 1}


def test_missing_directory_and_wrong_suffix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        read_toml_file(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="not a file"):
        read_toml_file(tmp_path)
    other = tmp_path / "cfg.yaml"
    other.write_text("a: 1\n")
    with pytest.raises(ConfigError, match=r"\.toml"):
        read_toml_file(other)


def test_key_paths_round_trip() -> None:
    assert parse_key_path("prompt_learning.gepa.modules[0].module_id") == (
        "prompt_learning", "gepa", "modules", 0, "module_id")
    assert parse_key_path("a.b.2.c") == ("a", "b", 2, "c")
    assert parse_key_path('a."x.y".z') == ("a", "x.y", "z")
    assert format_key(("a", "x.y", 3, "b")) == 'a."x.y"[3].b'


def test_line_of_in_a_shipped_example() -> None:
    lines = KeyLines((FIXTURES / "banking77_gepa.toml").read_text(encoding="utf-8"))
    assert lines.line_of("prompt_learning.gepa.evaluation.train_seeds") == 37
    assert lines.line_of("prompt_learning.gepa.evaluation") == 36
    assert lines.line_of("prompt_learning.initial_prompt.messages[1].role") == 18
    assert lines.line_of("prompt_learning.initial_prompt.messages.0") == 12
    assert lines.line_of("prompt_learning.gepa.evaluation.train_seeds[5]") == 37
    assert lines.line_of("prompt_learning.policy.not_there") == 26
    assert lines.line_of("prompt_learning.policy.not_there", exact=True) is None
    assert lines.line_of("nowhere") is None


def test_line_of_handles_strings_arrays_inline_tables_and_nested_arrays_of_tables() -> None:
    text = '''a = 1
b.c = """x
fake = 2 [not.a.table]
"""
lit = \'\'\'[also.not]\'\'\'
[[t]]
x = {p = 1, q = [1, {r = 2}]}  # comment with = and [x]
[[t]]
"quoted key" = 'v'
[t.sub]
z = [
  1,
  2,
]
[other]
'''
    lines = KeyLines(text)
    assert lines.line_of("b.c", exact=True) == 2
    assert lines.line_of("fake", exact=True) is None
    assert lines.line_of("not", exact=True) is None
    assert lines.line_of("also", exact=True) is None
    assert lines.line_of("t[0].x.q[1].r", exact=True) == 7
    assert lines.line_of('t[1]."quoted key"', exact=True) == 9
    assert lines.line_of("t[1].sub.z[1]", exact=True) == 13
    assert lines.line_of("other", exact=True) == 15
    assert lines.line_of("t", exact=True) == 6


def test_dotted_headers_define_their_parents() -> None:
    lines = KeyLines("[x]\n[a.b.c]\nk = 1\n")
    assert lines.line_of("a", exact=True) == 2
    assert lines.line_of("a.b.c.k", exact=True) == 3


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("[]{}=,.\"'#\n ab1")), max_size=80) | st.text(max_size=80))
def test_scanner_terminates_on_any_text(text: str) -> None:
    """Only valid TOML is scanned in practice, but no text may hang or crash the locator."""
    lines = KeyLines(text)
    assert all(isinstance(n, int) and n >= 1 for n in lines.lines.values())
