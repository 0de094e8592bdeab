"""Parsing backend list responses into compact records (``EventRecord``, ``MetricRecord``) or models.

A record keeps the few fields a history sorts, dedupes and filters on, plus the item's JSON text, from
which the pydantic ``Event`` / ``MetricPoint`` is rebuilt on demand. Well-formed pages are split and
checked by msgspec without building a Python object per field; anything odd (bare lists, nested
containers, ``event_type``, null ``data``) goes through the lenient path (``_lenient``), as synth-ai 0.2.24
accepts it.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterable
from typing import Any

import msgspec
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from synth_nb.client._lenient import INT64, extract_list, parse_event, parse_events, read_metrics
from synth_nb.client._numbering import SeqNumbering, StepNumbering
from synth_nb.records import Event, MetricPoint

__all__ = ["EventRecord", "MetricPage", "MetricRecord", "SeqNumbering", "StepNumbering", "event_record",
           "parse_event_records", "parse_events_body", "parse_metric_records", "parse_metrics_body",
           "strict_event_record"]



def _document(model: BaseModel) -> bytes:
    """A model as JSON its class reads back unchanged (pydantic's own JSON would write NaN as null)."""
    return json.dumps(model.model_dump(), default=to_jsonable_python, separators=(",", ":")).encode()


class EventRecord(msgspec.Struct, frozen=True, gc=False):
    """One event as received: its seq, type and level, and its JSON document.

    Records hold no containers, so the garbage collector need not track them (``gc=False``): pages of
    tracked records would push httpx's response cycles into old generations, where they wait for a full
    collection (hundreds of MiB over a million-event attach).
    """

    seq: int
    type: str
    level: str
    document: bytes

    def to_event(self) -> Event:
        return Event.model_validate_json(self.document)

    @classmethod
    def of(cls, event: Event) -> EventRecord:
        return cls(event.seq, event.type, event.level, _document(event))


class MetricRecord(msgspec.Struct, frozen=True, gc=False):
    """One metric point as received: its name, step and value, and its JSON document."""

    name: str
    step: int
    value: float
    document: bytes

    def to_point(self) -> MetricPoint:
        return MetricPoint.model_validate_json(self.document)

    @classmethod
    def of(cls, point: MetricPoint) -> MetricRecord:
        return cls(point.name, point.step, point.value, _document(point))


class MetricPage(list[MetricRecord]):
    """A page of metric records, and the points on it that could not be read (``unreadable``: each
    ``{"raw": the item as sent, "reason": why}``), which a history counts instead of dropping unseen."""

    def __init__(self, records: Iterable[MetricRecord] = (), unreadable: Iterable[dict[str, Any]] = ()) -> None:
        super().__init__(records)
        self.unreadable: list[dict[str, Any]] = list(unreadable)


# -- strict shapes: what a well-formed page holds ----------------------------------------------------

class _AnyObject(msgspec.Struct, frozen=True, gc=False):
    """A JSON object whose fields are not read (decoding it only checks that it is an object)."""


# The fields of a page are decoded as untracked structs (``gc=False``; they hold no containers): thousands
# of tracked ones per page set off the garbage collector several times per page, tripling decode time.
class _EventFields(msgspec.Struct, gc=False):
    seq: int
    type: str
    level: str = "info"
    message: str = ""
    created_at: str | None = None
    data: _AnyObject = _AnyObject()


class _MetricFields(msgspec.Struct, gc=False):
    name: str
    step: int
    value: float
    epoch: int | None = None
    created_at: str | None = None
    data: _AnyObject = _AnyObject()


class _EventsPage(msgspec.Struct):
    events: list[msgspec.Raw]


class _PointsPage(msgspec.Struct):
    points: list[msgspec.Raw]


class _EventFieldsPage(msgspec.Struct):
    events: list[_EventFields]


class _MetricFieldsPage(msgspec.Struct):
    points: list[_MetricFields]


_EVENT = msgspec.json.Decoder(_EventFields)
_METRIC = msgspec.json.Decoder(_MetricFields)
_EVENTS_PAGE = msgspec.json.Decoder(_EventsPage | list[msgspec.Raw])
_POINTS_PAGE = msgspec.json.Decoder(_PointsPage | list[msgspec.Raw])
_EVENT_FIELDS_PAGE = msgspec.json.Decoder(_EventFieldsPage | list[_EventFields])
_METRIC_FIELDS_PAGE = msgspec.json.Decoder(_MetricFieldsPage | list[_MetricFields])
_STRICT_ERRORS = (msgspec.ValidationError, msgspec.DecodeError)
_SEQ, _TYPE, _LEVEL, _NAME, _STEP, _VALUE = map(operator.attrgetter, ("seq", "type", "level", "name", "step", "value"))


def _int64(values: list[int]) -> bool:
    return not values or (min(values) in INT64 and max(values) in INT64)


def _strict_event_page(raw: bytes, items: list[msgspec.Raw]) -> list[EventRecord] | None:
    """Every item of a well-formed page as a record, decoded in one pass; None if any item is not."""
    try:
        page = _EVENT_FIELDS_PAGE.decode(raw)
    except _STRICT_ERRORS:
        return None
    fields = page if isinstance(page, list) else page.events
    seqs = [*map(_SEQ, fields)]  # attribute getters in C: a page is ten thousand items
    if len(fields) != len(items) or not _int64(seqs):
        return None
    return list(map(EventRecord, seqs, map(_TYPE, fields), map(_LEVEL, fields), map(bytes, items)))


def _strict_metric_page(raw: bytes, items: list[msgspec.Raw]) -> MetricPage | None:
    try:
        page = _METRIC_FIELDS_PAGE.decode(raw)
    except _STRICT_ERRORS:
        return None
    fields = page if isinstance(page, list) else page.points
    names, steps = [*map(_NAME, fields)], [*map(_STEP, fields)]
    if len(fields) != len(items) or not all(names) or not _int64(steps):
        return None
    return MetricPage(map(MetricRecord, names, steps, map(_VALUE, fields), map(bytes, items)))


def _strict_event(document: Any) -> EventRecord | None:
    """A well-formed event document as a record; None when it needs the lenient path."""
    try:
        fields = _EVENT.decode(document)
    except _STRICT_ERRORS:
        return None
    if fields.seq not in INT64:
        return None
    return EventRecord(fields.seq, fields.type, fields.level, bytes(document))


def _strict_metric(document: Any) -> MetricRecord | None:
    try:
        fields = _METRIC.decode(document)
    except _STRICT_ERRORS:
        return None
    if not fields.name or fields.step not in INT64:
        return None
    return MetricRecord(fields.name, fields.step, fields.value, bytes(document))


def strict_event_record(document: str | bytes) -> EventRecord | None:
    """One event document (an SSE frame) as a record when well-formed; None when it needs a closer look."""
    return _strict_event(document.encode() if isinstance(document, str) else document)


# -- lenient records (``_lenient`` reads the items into models) --------------------------------------

def event_record(item: Any, seq: int | None = None) -> EventRecord:
    """One decoded wire event (any JSON value) as a record, leniently (see ``parse_event``)."""
    return EventRecord.of(parse_event(item, seq))


def parse_metric_records(items: list[Any], numbering: StepNumbering | None = None) -> MetricPage:
    """Decoded wire points (dicts) as records, leniently; the unreadable ones on ``.unreadable``."""
    points, unreadable = read_metrics(items, numbering)
    return MetricPage(map(MetricRecord.of, points), unreadable)


# -- response bodies -----------------------------------------------------------------------------

def _lenient_items(raw: bytes, field: str) -> list[Any]:
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        return []
    return extract_list(data, field)


def parse_event_records(raw: bytes, since_seq: int = 0, numbering: SeqNumbering | None = None) -> list[EventRecord]:
    """Event records from a response body: well-formed items strictly, the rest leniently (items without a
    seq numbered after ``since_seq`` by ``numbering``; unreadable ones kept as ``unparsed`` events)."""
    try:
        page = _EVENTS_PAGE.decode(raw)
    except _STRICT_ERRORS:
        items: list[Any] = _lenient_items(raw, "events")
        return [EventRecord.of(e) for e in parse_events(items, since_seq, numbering)]
    items = page if isinstance(page, list) else page.events
    strict = _strict_event_page(raw, items)
    if strict is not None:
        if numbering is not None and strict:
            numbering.seen(max(map(_SEQ, strict)))
        return strict
    numbering = numbering or SeqNumbering()
    records, running = [], since_seq
    for item in items:
        record = _strict_event(item)
        if record is None:
            try:
                decoded = json.loads(bytes(item))
            except ValueError:
                decoded = bytes(item).decode(errors="replace")
            [event] = parse_events([decoded], running, numbering)
            record = EventRecord.of(event)
        else:
            numbering.seen(record.seq)
        running = record.seq
        records.append(record)
    return records


def parse_events_body(raw: bytes, since_seq: int = 0) -> list[Event]:
    """Events from a response body (see ``parse_event_records``)."""
    return [record.to_event() for record in parse_event_records(raw, since_seq)]


def parse_metrics_body(raw: bytes, numbering: StepNumbering | None = None) -> MetricPage:
    """Metric records from a ``{"points": [...]}`` body (or a lenient variant); see ``read_metrics``."""
    try:
        page = _POINTS_PAGE.decode(raw)
    except _STRICT_ERRORS:
        return parse_metric_records(_lenient_items(raw, "points"), numbering)
    items = page if isinstance(page, list) else page.points
    strict = _strict_metric_page(raw, items)
    if strict is not None:
        return strict
    numbering = numbering or StepNumbering()
    records = MetricPage()
    for item in items:
        record = _strict_metric(item)
        if record is None:
            lenient = parse_metric_records([json.loads(bytes(item))], numbering)
            records += lenient
            records.unreadable += lenient.unreadable
        else:
            numbering.seen(record.name, record.step)
            records.append(record)
    return records
