"""Turn HTTP failures into the synth_nb.errors hierarchy, with the backend's own words and no secrets."""

from __future__ import annotations

import json
from typing import Any, Protocol

from synth_nb.errors import (
    AuthError,
    BackendError,
    NetworkError,
    NotFoundError,
    RateLimitedError,
    ServerError,
    UnreachableError,
    ValidationError,
)
from synth_nb.secrets._mask import mask_text, mask_userinfo
from synth_nb.untrusted import inert

__all__ = ["Answer", "backend_message", "error_for_response", "network_error"]

_MAX_MESSAGE = 500


class Answer(Protocol):
    """What an error is made of: an httpx response, or ``synth_nb.client.plain.PlainAnswer``."""

    @property
    def status_code(self) -> int: ...

    @property
    def reason_phrase(self) -> str: ...

    @property
    def request(self) -> Any: ...

    @property
    def text(self) -> str: ...

    def json(self) -> Any: ...


def _parse_body(response: Answer) -> Any:
    # RuntimeError: httpx's ResponseNotRead, for a streamed answer whose body was not read (named by its base
    # class so that this module, which the standard library's transport uses too, imports no httpx)
    try:
        return response.json()
    except (ValueError, UnicodeDecodeError, RuntimeError):
        try:
            return response.text
        except RuntimeError:
            return None


def backend_message(body: Any) -> str:
    """The most useful human text in an error body: ``detail``, then ``message``, then ``error``."""
    if isinstance(body, dict):
        for key in ("detail", "message", "error"):
            value = body.get(key)
            if value:
                return value if isinstance(value, str) else backend_message(value) or json.dumps(value)
        return json.dumps(body)[:_MAX_MESSAGE]
    if isinstance(body, list):
        return "; ".join(backend_message(item) for item in body[:5])
    if body is None:
        return ""
    return str(body).strip()[:_MAX_MESSAGE]


def _hint(status: int) -> str:
    if status in (401, 403):
        return "check SYNTH_API_KEY (or the key the backend was started with)"
    if status == 404:
        return "check the job id and that --backend points at the right server"
    if status == 429:
        return "the backend is rate limiting; wait a little and retry"
    if status >= 500:
        return "the backend failed; retry later or check its logs"
    return "fix the request (config values) and submit again"


def error_for_response(response: Answer, *, secrets: list[str] | None = None) -> BackendError:
    """Build the error for a non-2xx response (401/403 auth, 404, 429, other 4xx validation, 5xx): httpx's, or
    the standard library transport's (``synth_nb.client.plain``)."""
    status = response.status_code
    body = _parse_body(response)
    detail = backend_message(body) or response.reason_phrase or "no details"
    detail = inert(detail if len(detail) <= _MAX_MESSAGE else detail[:_MAX_MESSAGE] + "…")  # one line, as sent
    method = response.request.method if response.request is not None else ""
    url = mask_userinfo(str(response.request.url)) if response.request is not None else ""
    message = f"{method} {url} -> HTTP {status}: {detail} ({_hint(status)})"
    message = mask_text(message, tuple(secrets or ()))
    cls: type[BackendError]
    if status in (401, 403):
        cls = AuthError
    elif status == 404:
        cls = NotFoundError
    elif status == 429:
        cls = RateLimitedError
    elif status >= 500:
        cls = ServerError
    else:
        cls = ValidationError
    return cls(message, status_code=status, method=method, url=url, body=body)


def network_error(exc: BaseException, method: str, url: str, *, secrets: list[str] | None = None,
                  unreached: bool = False) -> NetworkError:
    """A transport failure (refused, reset, timeout) after every retry, said plainly; ``unreached``: the
    backend never answered this client (``UnreachableError``: nothing was sent)."""
    kind = type(exc).__name__
    text = str(exc) or kind
    message = (
        f"{method} {url} failed: {kind}: {text} "
        "(is the backend running and reachable? check --backend and your network)"
    )
    if unreached:
        return UnreachableError(mask_text(message + "; nothing was sent", tuple(secrets or ())))
    return NetworkError(mask_text(message, tuple(secrets or ())))
