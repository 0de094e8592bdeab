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
