"""Lenient list parsing, as synth-ai 0.2.24 accepts responses."""

from __future__ import annotations

import json

from synth_nb.client._parse import extract_list, parse_events_body, parse_metrics


def test_event_pages_in_every_accepted_shape() -> None:
    event = {"seq": 1, "type": "a", "message": "m", "data": {}}
    assert [e.seq for e in parse_events_body(json.dumps([event]).encode())] == [1]
    assert [e.seq for e in parse_events_body(json.dumps({"events": [event], "has_more": False}).encode())] == [1]
    assert [e.seq for e in parse_events_body(json.dumps({"data": {"items": [event]}}).encode())] == [1]


def test_odd_events_are_repaired_or_skipped() -> None:
    body = json.dumps({"events": [
        {"seq": 1, "event_type": "legacy", "message": None, "data": None},
        {"seq": 2, "type": "listy", "data": [1, 2]},
        {"type": "no seq"},
        "not an object",
    ]}).encode()
    events = parse_events_body(body)
    assert [(e.seq, e.type, e.message, e.data) for e in events] == [
        (1, "legacy", "", {}), (2, "listy", "", {"value": [1, 2]})]
    assert parse_events_body(b"{truncated") == []


def test_metrics_without_name_or_step_are_dropped() -> None:
    points = parse_metrics([{"name": "loss", "step": 1, "value": 0.5}, {"step": 2, "value": 1.0},
                            {"name": "x", "value": 1.0}, {"name": "gepa.status", "step": 1, "value": "running"}])
    assert [(p.name, p.step) for p in points] == [("loss", 1)]
    assert extract_list({"points": []}, "points") == []
