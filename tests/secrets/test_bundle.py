"""SecretBundle / ResolvedSecret never show values: repr, str, logging, exceptions, masked dicts."""

from __future__ import annotations

import logging

import pytest
from pydantic import SecretStr

from synth_nb.errors import SecretsError
from synth_nb.secrets import ResolvedSecret, SecretBundle

CANARY = "sk_live_CANARY_must_never_show_9f3a"


def _bundle() -> SecretBundle:
    secret = ResolvedSecret("SYNTH_API_KEY", SecretStr(CANARY), "environment")
    return SecretBundle(secrets={"SYNTH_API_KEY": secret})


REQUIRED = ("SYNTH_API_KEY", "ENVIRONMENT_API_KEY")


def test_repr_str_and_logging_never_show_the_value(caplog: pytest.LogCaptureFixture) -> None:
    bundle = _bundle()
    secret = bundle.get("SYNTH_API_KEY")
    assert secret is not None
    texts = [repr(bundle), str(bundle), repr(secret), str(secret), f"{secret}", f"{bundle!r}",
             repr(secret.value), str(bundle.values())]
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("test").info("bundle %s secret %r", bundle, secret)
    texts.append(caplog.text)
    for text in texts:
        assert CANARY not in text
        assert "9f3a" not in text or "••••9f3a" in text


def test_masked_forms_keep_only_the_last_four() -> None:
    bundle = _bundle()
    assert bundle.get("SYNTH_API_KEY").masked == "••••9f3a"  # type: ignore[union-attr]
    assert bundle.as_masked_dict() == {"SYNTH_API_KEY": {"masked": "••••9f3a", "source": "environment"}}
    short = bundle.with_value("ENVIRONMENT_API_KEY", "short-key")
    assert short.as_masked_dict()["ENVIRONMENT_API_KEY"] == {"masked": "••••", "source": "pasted"}


def test_require_names_missing_keys_without_values() -> None:
    with pytest.raises(SecretsError) as err:
        _bundle().require(REQUIRED)
    assert "ENVIRONMENT_API_KEY" in str(err.value)
    assert "--env-file" in str(err.value)
    assert CANARY not in str(err.value) and CANARY not in repr(err.value)


def test_with_value_returns_a_new_complete_bundle() -> None:
    bundle = _bundle()
    full = bundle.with_value("ENVIRONMENT_API_KEY", "sk_env_pasted_value_1234")
    assert bundle.missing(REQUIRED) == ["ENVIRONMENT_API_KEY"]
    assert full.missing(REQUIRED) == [] and full.require(REQUIRED) is full
    assert full.secret_value("ENVIRONMENT_API_KEY") == "sk_env_pasted_value_1234"
    assert full.get("ENVIRONMENT_API_KEY").source == "pasted"  # type: ignore[union-attr]
    assert full.with_value("TASK_APP_URL", "http://t").setting("TASK_APP_URL") == "http://t"


def test_values_include_each_alias_for_masking() -> None:
    bundle = SecretBundle().with_value("ENVIRONMENT_API_KEY_ALIASES", "alias_one_abcdef,alias_two_ghijkl")
    raw = {v.get_secret_value() for v in bundle.values()}
    assert {"alias_one_abcdef", "alias_two_ghijkl"} <= raw
