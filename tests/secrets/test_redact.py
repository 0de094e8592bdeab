"""What messages may show of a user-written value: keys and key-shaped tokens are masked."""

from __future__ import annotations

import pytest

from synth_nb.secrets.redact import is_secret_key, looks_like_secret, redact, redact_value, shown


@pytest.mark.parametrize("value", [
    "sk_synth_a1b2c3d4e5f6a7b8c9d0e1f2", "sk-proj-abcdefgh12345678", "gsk_abcdefghijklmnop1234",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "AIzaSyA1234567890abcdefghijklmnopqrs",
    "e726c2dbcaac4ce3b4e734771fd62b31", "http://host/x?key=sk_env_abcdefgh12345678",
])
def test_key_shaped_values_are_masked(value: str) -> None:
    assert looks_like_secret(value)
    assert "••••" in shown(value) and value not in shown(value)


@pytest.mark.parametrize("value", [
    "Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "gpt-4o-mini",
    "llama-3.1-8b-instant", "http://127.0.0.1:8102", "https://my-task-app.example.com/api", "banking77",
    "my-rl-run-2024-01-15", "abcdefghijklmnopqrstuvwxyz",
])
def test_ordinary_values_are_shown_as_written(value: str) -> None:
    assert not looks_like_secret(value)
    assert shown(value) == repr(value)


def test_known_secrets_are_masked_whatever_their_shape() -> None:
    assert redact("the word hunter2 appears", ["hunter2"]) == "the word •••• appears"
    assert shown(["hunter2"], ["hunter2"]) == "['••••']"


def test_secret_key_names_and_nested_values() -> None:
    assert all(is_secret_key(k) for k in ("api_key", "task_app_api_key", "token", "auth_token", "password"))
    assert not any(is_secret_key(k) for k in ("max_tokens", "tokenizer", "monkey", "keys"))
    masked = redact_value("env", {"api_key": "plain", "list": [{"token": "abc"}], "n": 3})
    assert masked == {"api_key": "••••", "list": [{"token": "••••"}], "n": 3}


@pytest.mark.parametrize("name", [
    "auth", "Authorization", "api_key_header", "x-api-key", "apiKey", "authToken", "credentials", "credential",
    "bearer", "bearer_token", "client_secret", "db_password", "passwd", "private_key", "access_token", "cookie",
    "proxy_authorization", "session_token", "auth_header", "key",
])
def test_secrets_under_other_names_are_known_by_their_name(name: str) -> None:
    assert is_secret_key(name)
    assert redact_value(name, "plain-value-here") == "••••here"


@pytest.mark.parametrize("name", [
    "max_tokens", "max_new_tokens", "token_count", "token_counting_model", "tokenizer", "api_key_env", "keyword",
    "author", "authority", "idempotency_key", "auth_mode", "key_name", "session_id",
])
def test_names_that_only_look_like_a_secrets_are_not_one(name: str) -> None:
    assert not is_secret_key(name)


@pytest.mark.parametrize(("text", "kept"), [
    ("curl -H 'Authorization: Bearer abc.def-ghi_jkl9' http://x", "Authorization: Bearer ••••jkl9"),
    ("Basic Q0FOQVJZYXV0aG9yaXphdGlvbjAxMjM0NTY3", "Basic ••••NTY3"),
    ("token ghijkl0123456789", "token ••••6789"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "••••sR8U"),
])
def test_credentials_after_an_auth_scheme_or_shaped_as_a_jwt_are_masked(text: str, kept: str) -> None:
    assert looks_like_secret(text)
    assert kept in redact(text)


@pytest.mark.parametrize("text", ["use token authentication", "basic tokenization", "a bearer bond"])
def test_prose_naming_an_auth_scheme_is_kept(text: str) -> None:
    assert redact(text) == text and not looks_like_secret(text)


def test_a_config_copy_masks_named_secrets_and_key_shapes_and_stays_valid_toml() -> None:
    import tomllib

    from synth_nb.pipeline.bundle import mask_toml

    text = ('[job]\ntask_app_api_key = "sk_env_abcdefghijklmnop"  # the key\n'
            'headers = { auth = "plainpass", host = "h.example.com" }\nkey_ref = "${MY_KEY}"\n'
            '"quoted.password" = \'hunter2hunter2\'\nnotes = """two\nlines with sk-proj-ABCDEFGH12345678 in"""\n'
            '# Bearer abcdef0123456789xyz\nmodel = "Qwen/Qwen3-4B"\nescaped = "a \\" b"\n')
    masked = mask_toml(text, [])
    assert tomllib.loads(masked)["job"] == {
        "task_app_api_key": "••••mnop", "headers": {"auth": "••••", "host": "h.example.com"}, "key_ref": "${MY_KEY}",
        "quoted.password": "••••ter2", "notes": "two\nlines with ••••5678 in", "model": "Qwen/Qwen3-4B",
        "escaped": 'a " b'}
    assert "# Bearer ••••9xyz" in masked and "abcdef0123456789xyz" not in masked
