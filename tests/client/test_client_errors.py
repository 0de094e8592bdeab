"""Status codes map onto the one error hierarchy; messages keep the backend's words, never the key."""

from __future__ import annotations

import httpx
import pytest

from synth_nb.client._errors import backend_message, error_for_response, network_error
from synth_nb.errors import (
    AuthError,
    NetworkError,
    NotFoundError,
    RateLimitedError,
    ServerError,
    ValidationError,
)

SECRET = "sk_live_canary_abcdefghijklmnop"


def _response(status: int, **kwargs: object) -> httpx.Response:
    return httpx.Response(status, request=httpx.Request("GET", "http://h/api/rl/jobs/1"), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("status", "cls"),
    [(401, AuthError), (403, AuthError), (404, NotFoundError), (429, RateLimitedError), (400, ValidationError),
     (409, ValidationError), (422, ValidationError), (500, ServerError), (503, ServerError)],
)
def test_status_maps_to_error_class(status: int, cls: type) -> None:
    error = error_for_response(_response(status, json={"detail": "nope"}))
    assert type(error) is cls
    assert error.status_code == status
    assert "nope" in str(error)


def test_message_prefers_detail_then_message_then_error() -> None:
    assert backend_message({"detail": "a", "message": "b"}) == "a"
    assert backend_message({"message": "b", "error": "c"}) == "b"
    assert backend_message({"error": {"message": "deep"}}) == "deep"
    assert backend_message([{"detail": "x"}, {"detail": "y"}]) == "x; y"
    assert backend_message("plain text") == "plain text"


def test_secrets_echoed_by_the_backend_are_masked() -> None:
    error = error_for_response(_response(400, json={"detail": f"bad key {SECRET}"}), secrets=[SECRET])
    assert SECRET not in str(error)
    assert "mnop" in str(error)


def test_network_error_masks_secrets_and_says_what_to_check() -> None:
    exc = httpx.ConnectError(f"refused for {SECRET}")
    error = network_error(exc, "GET", "http://h/api", secrets=[SECRET])
    assert isinstance(error, NetworkError)
    assert SECRET not in str(error)
    assert "--backend" in str(error)
