"""Reading what a backend sends as synth-ai 0.2.24 does: odd shapes repaired into ``Event`` / ``MetricPoint``.

Bare lists, lists nested in containers, ``event_type`` for ``type``, null ``data``, seqs and steps missing or
sent as strings: each is read the way 0.2.24 reads it, and what cannot be read is kept and said (an
``unparsed`` event, an unreadable point with its reason), never dropped unseen. Well-formed pages never come
here: ``_parse`` decodes them strictly, and hands over an item only when it needs this closer look.
"""

from __future__ import annotations

from typing import Any

from synth_nb.client._numbering import SeqNumbering, StepNumbering
from synth_nb.records import UNPARSED_EVENT_TYPE, Event, MetricPoint

__all__ = ["INT64", "extract_list", "parse_event", "parse_events", "parse_metrics", "read_metrics",
           "unparsed_event"]

#: keys a list may hide under in lenient list responses (0.2.24 ``_extract_list``)
_LIST_CONTAINERS = ("data", "result", "results", "items", "payload", "records", "entries", "values")
#: seqs and steps are kept as 64-bit integers
INT64 = range(-(2**63), 2**63)


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


def _whole_number(raw: Any) -> int | None:
    """``raw`` as a 64-bit integer when it is one (``"5"`` counts; ``5.5``, ``"abc"`` and 2**70 do not)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str) and raw.strip().lstrip("-").isdigit():
        raw = int(raw)
    return raw if isinstance(raw, int) and raw in INT64 else None


def _wire_seq(item: dict[str, Any]) -> int | None:
    """The item's own seq when it is a usable integer."""
    return _whole_number(item.get("seq"))


def unparsed_event(seq: int, item: Any, reason: str) -> Event:
    """An item that could not be read as an event, kept whole under ``data.raw`` with why."""
    return Event(seq=seq, type=UNPARSED_EVENT_TYPE, level="warning", message=f"could not interpret: {reason}",
                 data={"raw": item, "reason": reason})


def _repaired(item: dict[str, Any], seq: int) -> Event | None:
    """``item`` as an ``Event`` (``event_type`` for ``type``, null ``data``/``message`` tolerated)."""
    item = dict(item)
    if item.get("seq") is not None and _wire_seq(item) is None:
        item["wire_seq"] = item["seq"]  # kept as sent, beside the seq it was given
    item["seq"] = seq
    data = item.get("data", {})
    if "type" not in item:
        item["type"] = item.get("event_type")
    if not isinstance(data, dict):
        item["data"] = {} if data is None else {"value": data}
    if item.get("message") is None:
        item["message"] = ""
    if not isinstance(item.get("type"), str) or not item["type"]:
        return None
    try:
        return Event.model_validate(item)
    except ValueError:
        return None


def _reason(item: Any) -> str:
    if not isinstance(item, dict):
        return f"an event that is a JSON {_JSON_KINDS.get(type(item), type(item).__name__)}, not an object"
    if not item.get("type") and not item.get("event_type"):
        return "an event with no type"
    return "an event whose fields have unexpected types"


_JSON_KINDS = {str: "string", int: "number", float: "number", bool: "boolean", list: "array", type(None): "null"}


def parse_event(item: Any, seq: int | None = None) -> Event:
    """One wire event -> ``Event``; ``seq`` is used when the item has none. What cannot be read is kept as
    an ``unparsed`` event holding the item."""
    own = _wire_seq(item) if isinstance(item, dict) else None
    number = own if own is not None else seq if seq is not None else 0
    event = _repaired(item, number) if isinstance(item, dict) else None
    return event if event is not None else unparsed_event(number, item, _reason(item))


def parse_events(items: list[Any], since_seq: int = 0, numbering: SeqNumbering | None = None) -> list[Event]:
    """Wire items as events, in order; items without a seq are numbered after the one before them."""
    numbering = numbering or SeqNumbering()
    events, running = [], since_seq
    for item in items:
        own = _wire_seq(item) if isinstance(item, dict) else None
        if own is None:
            own = numbering.seq_for(item, running)
        else:
            numbering.seen(own)
        running = own
        events.append(parse_event(item, own))
    return events


def _point_reason(item: Any) -> str:
    """Why a wire point is not a metric point (0.2.24 skips nameless points and charts only numbers)."""
    if not isinstance(item, dict):
        return "not an object"
    if not item.get("name") or not isinstance(item["name"], str):
        return "no name"
    try:
        float(item.get("value"))  # type: ignore[arg-type]  # what a lax float accepts, near enough
    except (TypeError, ValueError):
        return "value not a number"
    if item.get("step") is not None and _whole_number(item["step"]) is None:
        return "step not a whole number"
    return "fields of unexpected types"


def read_metrics(items: list[Any], numbering: StepNumbering | None = None) -> tuple[list[MetricPoint], list[dict[str, Any]]]:
    """Wire points as ``MetricPoint``s, and the ones that could not be read (``{"raw", "reason"}``).

    A point without a step gets the next one of its name (``numbering``); a value sent as a numeric string
    (``"0.5"``) is read as the number, as 0.2.24's CLI prints it. A point with no name, or whose value is
    not a number (``"running"``), cannot be charted: it is returned as unreadable, not dropped unseen.
    """
    numbering = numbering or StepNumbering()
    points, unreadable = [], []
    for item in items:
        point = None
        if isinstance(item, dict) and item.get("name") and isinstance(item["name"], str):
            if item.get("step") is None:
                item = {**item, "step": numbering.step_for(item)}
            try:
                point = MetricPoint.model_validate(item)
            except ValueError:
                point = None
        if point is not None and point.step in INT64:
            numbering.seen(point.name, point.step)
            points.append(point)
        else:
            unreadable.append({"raw": item, "reason": _point_reason(item)})
    return points, unreadable


def parse_metrics(items: list[Any], numbering: StepNumbering | None = None) -> list[MetricPoint]:
    """Wire points as ``MetricPoint``s (see ``read_metrics``; the unreadable ones are left out)."""
    return read_metrics(items, numbering)[0]
