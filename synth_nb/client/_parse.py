"""Lenient parsing of backend list responses into ``Event`` / ``MetricPoint`` records.

Well-formed pages are validated straight from JSON bytes (fast); anything odd (bare lists, nested
containers, ``event_type``, null ``data``) goes through the lenient path, as synth-ai 0.2.24 accepts it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from synth_nb.records import Event, MetricPoint

__all__ = ["extract_list", "parse_event", "parse_events", "parse_events_body", "parse_metrics"]

#: keys a list may hide under in lenient list responses (0.2.24 ``_extract_list``)
_LIST_CONTAINERS = ("data", "result", "results", "items", "payload", "records", "entries", "values")


def extract_list(data: Any, field: str) -> list[Any]:
    """Find the list in a lenient response: a bare list, ``{field: [...]}`` or nested containers."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        value = data.get(field)
        if isinstance(value, list):
            return value
        for key in _LIST_CONTAINERS:
            if key in data:
                found = extract_list(data[key], field)
                if found:
                    return found
    return []


def parse_event(item: Any) -> Event | None:
    """One wire event -> ``Event`` (tolerating ``event_type``, null ``data``/``message``); None if unusable."""
    if not isinstance(item, dict) or item.get("seq") is None:
        return None
    data = item.get("data", {})
    if "type" not in item or not isinstance(data, dict) or item.get("message") is None:
        item = dict(item)
        item.setdefault("type", item.get("event_type") or "event")
        if not isinstance(data, dict):
            item["data"] = {} if data is None else {"value": data}
        if item.get("message") is None:
            item["message"] = ""
    try:
        return Event.model_validate(item)
    except ValueError:
        return None


class _EventsPage(BaseModel):
    events: list[Event]


_EVENT_LIST = TypeAdapter(list[Event])


def parse_events_body(raw: bytes) -> list[Event]:
    """Events from a response body: validated straight from JSON when well-formed, else leniently."""
    try:
        if raw[:1] == b"[":
            return _EVENT_LIST.validate_json(raw)
        return _EventsPage.model_validate_json(raw).events
    except PydanticValidationError:
        try:
            data = json.loads(raw) if raw else {}
        except ValueError:
            return []
        return parse_events(extract_list(data, "events"))


def parse_events(items: list[Any]) -> list[Event]:
    events = []
    for item in items:
        event = parse_event(item)
        if event is not None:
            events.append(event)
    return events


def parse_metrics(items: list[Any]) -> list[MetricPoint]:
    points = []
    for item in items:
        if isinstance(item, dict) and item.get("name") and item.get("step") is not None:
            try:
                points.append(MetricPoint.model_validate(item))
            except ValueError:
                continue
    return points
