""".env reading: python-dotenv syntax, errors with file and line but never the line's content."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth_nb.errors import SecretsError
from synth_nb.secrets._dotenv import find_dotenv_upwards, read_dotenv

CANARY = "sk_CANARY_in_a_broken_line_7777"


def test_reads_quoted_exported_and_commented_values(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text('# comment\nexport SYNTH_API_KEY="abc def"\nENVIRONMENT_API_KEY=xyz # note\nEMPTY=\n')
    assert read_dotenv(env) == {"SYNTH_API_KEY": "abc def", "ENVIRONMENT_API_KEY": "xyz"}


def test_syntax_error_reports_file_and_line_without_the_secret(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text(f"GOOD=1\nSYNTH_API_KEY {CANARY}\nOTHER='unterminated {CANARY}\n")
    with pytest.raises(SecretsError) as err:
        read_dotenv(env)
    message = str(err.value)
    assert f"{env}:2" in message and "2, 3" in message and "KEY=VALUE" in message
    assert CANARY not in message


def test_non_utf8_file_reports_the_line(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_bytes(b"A=1\nB=\xff\xfe\n")
    with pytest.raises(SecretsError, match=r"\.env:2: .*not valid UTF-8"):
        read_dotenv(env)


def test_missing_file_is_a_secrets_error(tmp_path: Path) -> None:
    with pytest.raises(SecretsError, match="env file not found"):
        read_dotenv(tmp_path / "nope.env")


def test_find_dotenv_walks_up(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("A=1\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_dotenv_upwards(deep) == tmp_path / ".env"
    (deep / ".env").write_text("A=2\n")
    assert find_dotenv_upwards(deep) == deep / ".env"
