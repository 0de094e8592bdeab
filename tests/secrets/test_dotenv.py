""".env reading: python-dotenv syntax, errors with file and line but never the line's content."""

from __future__ import annotations

import os
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


def test_a_symlink_loop_is_an_error_naming_the_file(tmp_path: Path) -> None:
    from synth_nb.secrets import resolve_secrets

    loop = tmp_path / "loop.env"
    loop.symlink_to(loop)
    with pytest.raises(SecretsError, match=r"loop\.env"):
        resolve_secrets(env_files=[loop], environ={}, cwd=tmp_path)


@pytest.mark.parametrize(("content", "line", "what"), [
    (b"A=1\nB=\x00\n", 2, "NUL byte"),
    (b"A=1\n\nSYNTH_API_KEY\n", 3, "has no '='"),
])
def test_binary_files_and_known_keys_without_a_value_name_file_and_line(tmp_path: Path, content: bytes, line: int,
                                                                        what: str) -> None:
    from synth_nb.secrets import SECRET_KEYS
    from synth_nb.secrets._dotenv import load_dotenv_file

    env = tmp_path / ".env"
    env.write_bytes(content)
    with pytest.raises(SecretsError, match=f"{env}:{line}: .*{what}"):
        load_dotenv_file(env, SECRET_KEYS)


def test_a_bare_key_synth_nb_does_not_read_is_left_alone(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("SOME_FLAG\nSYNTH_API_KEY=sk_value_0123456789\n")
    assert read_dotenv(env) == {"SYNTH_API_KEY": "sk_value_0123456789"}


def test_a_folder_is_named_as_a_folder(tmp_path: Path) -> None:
    with pytest.raises(SecretsError, match=f"{tmp_path}.* is a folder"):
        read_dotenv(tmp_path)


def test_the_missing_key_error_names_where_it_looked_and_the_empty_line(tmp_path: Path) -> None:
    from synth_nb.secrets import SYNTH_API_KEY, resolve_secrets

    given = tmp_path / "given.env"
    given.write_text("ENVIRONMENT_API_KEY=sk_env_0123456789\n")
    (tmp_path / ".env").write_text("# fill in\nSYNTH_API_KEY=\n")
    bundle = resolve_secrets(env_files=[given], environ={}, cwd=tmp_path)
    with pytest.raises(SecretsError) as err:
        bundle.require([SYNTH_API_KEY])
    message = str(err.value)
    assert str(given) in message and "the environment" in message and str(tmp_path / ".env") in message
    assert f"SYNTH_API_KEY is empty at {tmp_path / '.env'}:2" in message


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    from synth_nb.secrets import resolve_secrets

    fifo = tmp_path / "pipe.env"
    os.mkfifo(fifo)
    with pytest.raises(SecretsError, match=r"pipe\.env is not a regular file"):
        resolve_secrets(env_files=[fifo], environ={}, cwd=tmp_path)


@pytest.mark.parametrize("written", ["ENVIRONMENT_APIKEY", "environment_api_key", "ENVIROMENT_API_KEY"])
def test_a_misspelt_key_in_a_dotenv_file_is_named_with_its_line(tmp_path: Path, written: str) -> None:
    from synth_nb.secrets import ENVIRONMENT_API_KEY, SYNTH_API_KEY, resolve_secrets

    (tmp_path / ".env").write_text(f"SYNTH_API_KEY=sk_value_0123456789\n# the task app's key\n{written}={CANARY}\n")
    bundle = resolve_secrets(environ={}, cwd=tmp_path)
    with pytest.raises(SecretsError) as err:
        bundle.require([SYNTH_API_KEY, ENVIRONMENT_API_KEY])
    message = str(err.value)
    assert f"found {written}: did you mean ENVIRONMENT_API_KEY (in {tmp_path / '.env'} line 3)?" in message
    assert CANARY not in message


def test_unrelated_names_are_no_near_miss(tmp_path: Path) -> None:
    from synth_nb.secrets import ENVIRONMENT_API_KEY, resolve_secrets

    (tmp_path / ".env").write_text("OPENAI_API_KEY=x\nENVIRONMENT=prod\nAPI_KEY=y\n")
    with pytest.raises(SecretsError) as err:
        resolve_secrets(environ={}, cwd=tmp_path).require([ENVIRONMENT_API_KEY])
    assert "did you mean" not in str(err.value)
