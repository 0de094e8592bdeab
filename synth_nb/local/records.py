"""Stored JSON: strict ``to_json``, and the served JSON of an event or metric point, built once when written.

History pages are then the stored texts joined (a page of 10k rows is neither parsed nor re-encoded),
and a reader's cost is the rows it fetches.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["event_record", "metric_record", "quote_json", "to_json"]

#: a JSON string literal, ASCII only (like ``json.dumps``), so no lone surrogate reaches SQLite
quote_json = json.encoder.encode_basestring_ascii


def event_record(job_id: str, seq: int, type: str, level: str, message: str, payload: str, created_at: str) -> str:
    """An event as served, key order as before: seq, type, level, message, data, created_at, job_id."""
    return (f'{{"seq":{seq},"type":{quote_json(type)},"level":{quote_json(level)},"message":{quote_json(message)},'
            f'"data":{payload},"created_at":"{created_at}","job_id":{quote_json(job_id)}}}')


def metric_record(job_id: str, name: str, step: int, value: float, payload: str, created_at: str) -> str:
    """A metric point as served: name, step, value (non-finite as its name), data, created_at, job_id."""
    shown = repr(value) if math.isfinite(value) else f'"{value}"'
    return (f'{{"name":{quote_json(name)},"step":{step},"value":{shown},"data":{payload},'
            f'"created_at":{quote_json(created_at)},"job_id":{quote_json(job_id)}}}')


def _finite(value: Any) -> Any:
    """``value`` with NaN/±inf floats replaced by their names (strict JSON, which clients parse, has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


#: one encoder for every call: building one per event cost more than encoding the event
_ENCODER = json.JSONEncoder(default=str, allow_nan=False, separators=(",", ":"))


def to_json(value: Any) -> str:
    """Strict JSON for storage: anything non-serialisable becomes a string, non-finite floats their names."""
    try:
        return _ENCODER.encode(value)
    except ValueError:
        return _ENCODER.encode(_finite(value))
