"""Backend resolution: --backend > SYNTH_BACKEND_OVERRIDE (process env) > hosted default, always /api."""

from __future__ import annotations

import pytest

from synth_nb.backend_target import DEFAULT_BACKEND, ensure_api_base, resolve_backend
from synth_nb.errors import OverrideError


@pytest.mark.parametrize("url", ["http://h:8000", "http://h:8000/", "http://h:8000/api", "http://h:8000/api/"])
def test_normalised_to_api(url: str) -> None:
    assert ensure_api_base(url) == "http://h:8000/api"


def test_precedence() -> None:
    env = {"SYNTH_BACKEND_OVERRIDE": "http://env:1/"}
    assert resolve_backend("https://arg.example.com", env) == "https://arg.example.com/api"
    assert resolve_backend(None, env) == "http://env:1/api"
    assert resolve_backend(None, {}) == DEFAULT_BACKEND + "/api"
    assert resolve_backend("  ", {"SYNTH_BACKEND_OVERRIDE": ""}) == DEFAULT_BACKEND + "/api"


def test_invalid_url_is_an_override_error() -> None:
    with pytest.raises(OverrideError, match="--backend"):
        resolve_backend("localhost:8000", {})
    with pytest.raises(OverrideError, match="SYNTH_BACKEND_OVERRIDE"):
        resolve_backend(None, {"SYNTH_BACKEND_OVERRIDE": "ftp://x"})
