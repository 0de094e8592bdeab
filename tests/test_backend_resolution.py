"""Backend resolution: --backend > SYNTH_BACKEND_OVERRIDE (process env) > hosted default, always /api."""

from __future__ import annotations

import pytest

from synth_nb.backend import DEFAULT_BACKEND, LOCAL, is_local, normalize_backend_url, resolve_backend
from synth_nb.errors import ConfigError, OverrideError


@pytest.mark.parametrize(("url", "expected"), [
    ("http://h:8000", "http://h:8000/api"),
    ("http://h:8000/", "http://h:8000/api"),
    ("http://h:8000/api", "http://h:8000/api"),
    ("http://h:8000/api/", "http://h:8000/api"),
    ("https://host.example/api/v1", "https://host.example/api"),
    ("  https://host.example  ", "https://host.example/api"),
])
def test_normalised_to_exactly_one_api_suffix(url: str, expected: str) -> None:
    assert normalize_backend_url(url) == expected


def test_a_url_without_scheme_cannot_be_normalised() -> None:
    with pytest.raises(ConfigError, match="http"):
        normalize_backend_url("localhost:8000")


def test_precedence() -> None:
    env = {"SYNTH_BACKEND_OVERRIDE": "http://env:1/"}
    assert resolve_backend("https://arg.example.com", env) == "https://arg.example.com/api"
    assert resolve_backend(None, env) == "http://env:1/api"
    assert resolve_backend(None, {}) == DEFAULT_BACKEND + "/api"
    assert resolve_backend(None, {"SYNTH_BACKEND_OVERRIDE": "  "}) == DEFAULT_BACKEND + "/api"


@pytest.mark.parametrize("given", ["", "  "])
def test_an_empty_backend_flag_never_means_the_hosted_backend(given: str) -> None:
    """``--backend "$URL"`` with $URL unset must not send a real run to the hosted service."""
    with pytest.raises(OverrideError, match="--backend is empty"):
        resolve_backend(given, {})


def test_local_is_kept_as_the_sentinel() -> None:
    assert resolve_backend("local", {"SYNTH_BACKEND_OVERRIDE": "http://env:1"}) == LOCAL
    assert is_local(" local ") and not is_local("http://local") and not is_local(None)
    with pytest.raises(OverrideError, match="SYNTH_BACKEND_OVERRIDE"):
        resolve_backend(None, {"SYNTH_BACKEND_OVERRIDE": "local"})  # only the flag names the embedded backend


def test_invalid_url_is_an_override_error_about_the_backend_field() -> None:
    with pytest.raises(OverrideError, match="--backend") as caught:
        resolve_backend("localhost:8000", {})
    assert caught.value.field == "backend"
    with pytest.raises(OverrideError, match="SYNTH_BACKEND_OVERRIDE"):
        resolve_backend(None, {"SYNTH_BACKEND_OVERRIDE": "ftp://x"})
