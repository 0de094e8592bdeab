"""Pages parsed into compact records rebuild exactly the models the lenient pydantic parse gives."""

from __future__ import annotations

import json
import math

from synth_nb.client import EventRecord, MetricRecord
from synth_nb.client._lenient import parse_events, parse_metrics
from synth_nb.client._parse import parse_event_records, parse_metrics_body, strict_event_record

ODD_EVENTS = [
    {"seq": 1, "type": "a", "level": "info", "message": "m", "data": {"k": [1, {"x": None}]}, "created_at": "t",
     "job_id": "job_1"},
    {"seq": 2, "type": "b", "message": "ünïcode ✓", "data": {}, "run": {"nested": True}},
    {"seq": 3, "event_type": "legacy", "message": None, "data": None},
    {"seq": 4, "type": "listy", "data": [1, 2]},
    {"seq": "5", "type": "string seq"},
    {"seq": 6, "type": "numeric time", "created_at": 12.5},
    {"type": "no seq"},
    "not an object",
    {"seq": 2**70, "type": "too big"},
    {"seq": 7, "type": "last"},
]


def _body(events: list[object]) -> bytes:
    return json.dumps({"events": events, "has_more": False}).encode()


def test_event_records_rebuild_what_the_lenient_parse_gives() -> None:
    records = parse_event_records(_body(ODD_EVENTS))
    expected = parse_events(ODD_EVENTS)
    assert [r.to_event() for r in records] == expected
    # no seq, not an object and a seq too big are numbered after the one before; seq 7 then repeats one
    assert [r.seq for r in records] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 7]
    assert [r.type for r in records][5:9] == ["unparsed", "no seq", "unparsed", "too big"]
    assert records[8].to_event().model_extra == {"wire_seq": 2**70}
    assert [(r.type, r.level) for r in records][:3] == [("a", "info"), ("b", "info"), ("legacy", "info")]
    assert records[0].to_event().model_extra == {"job_id": "job_1"}


def test_well_formed_items_keep_their_wire_text() -> None:
    item = {"seq": 9, "type": "a", "message": "m", "data": {"x": 1}, "job_id": "j"}
    text = json.dumps(item, separators=(",", ":")).encode()
    assert parse_event_records(b'{"events":[' + text + b"]}") == [EventRecord(9, "a", "info", text)]
    assert parse_event_records(b"[" + text + b"]") == [EventRecord(9, "a", "info", text)]
    assert strict_event_record(text.decode()) == EventRecord(9, "a", "info", text)
    assert strict_event_record('{"seq": 9, "type": "a", "data": null}') is None
    assert strict_event_record('{"seq": 9, "ty') is None


def test_nested_containers_and_broken_bodies() -> None:
    event = {"seq": 1, "type": "a"}
    assert [r.seq for r in parse_event_records(json.dumps({"data": {"items": [event]}}).encode())] == [1]
    assert parse_event_records(b"{truncated") == [] and parse_event_records(b"") == []


def test_a_page_with_nan_falls_back_without_losing_it() -> None:
    body = b'{"events": [{"seq": 1, "type": "a", "data": {"loss": NaN}}]}'
    (record,) = parse_event_records(body)
    assert math.isnan(record.to_event().data["loss"])


def test_metric_records_rebuild_what_the_lenient_parse_gives() -> None:
    items = [{"name": "loss", "step": 1, "value": 0.5, "data": {"n": 2}, "job_id": "j"},
             {"name": "loss", "step": 2, "value": 1}, {"step": 3, "value": 1.0}, {"name": "x", "value": 1.0},
             {"name": "gepa.status", "step": 1, "value": "running"}, {"name": "s", "step": 4, "value": "0.25"},
             {"name": "", "step": 5, "value": 1.0}, {"name": "e", "step": 6, "value": 2.0, "epoch": 1}]
    records = parse_metrics_body(json.dumps({"points": items}).encode())
    assert [r.to_point() for r in records] == parse_metrics(items)
    assert [(r.name, r.step, r.value) for r in records] == [("loss", 1, 0.5), ("loss", 2, 1.0), ("x", 1, 1.0),
                                                            ("s", 4, 0.25), ("e", 6, 2.0)]
    (nan,) = parse_metrics_body(b'{"points": [{"name": "loss", "step": 1, "value": NaN}]}')
    assert math.isnan(nan.value) and math.isnan(nan.to_point().value)
    assert parse_metrics_body(b"") == [] and parse_metrics_body(b"<html>") == []


def test_records_of_models_round_trip() -> None:
    from synth_nb.records import Event, MetricPoint

    event = Event(seq=3, type="a", data={"x": [1.5, None]}, extra="kept")
    point = MetricPoint(name="loss", step=2, value=math.inf, epoch=1)
    assert EventRecord.of(event).to_event() == event
    assert MetricRecord.of(point).to_point() == point
