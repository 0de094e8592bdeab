"""Request parsing helpers: every bad input becomes an ``ApiError`` (4xx JSON ``{"detail": ...}``)."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

__all__ = ["ApiError", "int_param", "json_body", "error_response"]


class ApiError(Exception):
    """An HTTP error answered as ``{"detail": detail}`` with ``status_code``."""

    def __init__(self, status_code: int, detail: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.detail = detail
        self.headers = headers


def error_response(status_code: int, detail: Any, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status_code, headers=headers)


async def json_body(request: Request, *, max_bytes: int = 16 * 1024 * 1024,
                    allow_empty: bool = False) -> dict[str, Any]:
    """The request's JSON object body; 400 for malformed JSON, 422 for a non-object, 413 when too large."""
    raw = await request.body()
    if len(raw) > max_bytes:
        raise ApiError(413, f"request body is larger than {max_bytes} bytes")
    if not raw.strip():
        if allow_empty:
            return {}
        raise ApiError(400, "request body is empty; send a JSON object")
    try:
        body = json.loads(raw, parse_constant=_reject_constant)
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError) as exc:
        raise ApiError(400, f"request body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(422, f"request body must be a JSON object, got {type(body).__name__}")
    return body


def _reject_constant(name: str) -> Any:
    """Python's json accepts NaN/Infinity; JSON (and our responses) do not."""
    raise ValueError(f"{name} is not a valid JSON number")


def int_param(request: Request, name: str, default: int | None, *, minimum: int | None = None,
              maximum: int | None = None) -> int | None:
    """An integer query parameter (422 if not an integer); clamped to ``maximum``."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(422, f"query parameter {name!r} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ApiError(422, f"query parameter {name!r} must be >= {minimum}, got {value}")
    if maximum is not None:
        value = min(value, maximum)
    return value
