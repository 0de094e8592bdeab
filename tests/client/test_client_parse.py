"""Lenient list parsing, as synth-ai 0.2.24 accepts responses."""

from __future__ import annotations

import json

from synth_nb.client._lenient import extract_list, parse_metrics
from synth_nb.client._parse import parse_events_body, parse_metrics_body


def test_event_pages_in_every_accepted_shape() -> None:
    event = {"seq": 1, "type": "a", "message": "m", "data": {}}
    assert [e.seq for e in parse_events_body(json.dumps([event]).encode())] == [1]
    assert [e.seq for e in parse_events_body(json.dumps({"events": [event], "has_more": False}).encode())] == [1]
    assert [e.seq for e in parse_events_body(json.dumps({"data": {"items": [event]}}).encode())] == [1]


def test_odd_events_are_repaired_numbered_or_kept_as_unparsed() -> None:
    body = json.dumps({"events": [
        {"seq": 1, "event_type": "legacy", "message": None, "data": None},
        {"seq": 2, "type": "listy", "data": [1, 2]},
        {"type": "no seq"},
        "not an object",
        {"seq": 9, "message": "no type"},
    ]}).encode()
    events = parse_events_body(body)
    assert [(e.seq, e.type, e.message, e.data) for e in events[:3]] == [
        (1, "legacy", "", {}), (2, "listy", "", {"value": [1, 2]}), (3, "no seq", "", {})]
    assert [(e.seq, e.type, e.level) for e in events[3:]] == [(4, "unparsed", "warning"), (9, "unparsed", "warning")]
    assert events[3].data == {"raw": "not an object", "reason": "an event that is a JSON string, not an object"}
    assert events[4].data["raw"] == {"seq": 9, "message": "no type"}
    assert parse_events_body(b"{truncated") == []


def test_events_without_seq_are_numbered_after_the_cursor_and_keep_their_number_when_sent_again() -> None:
    from synth_nb.client._parse import SeqNumbering, parse_event_records

    numbering = SeqNumbering()
    first = [{"type": "a", "message": "1"}, {"type": "b", "message": "2"}]
    assert [r.seq for r in parse_event_records(json.dumps(first).encode(), 0, numbering)] == [1, 2]
    again = [*first, {"type": "c", "message": "3"}]  # a backend that ignores since_seq sends it all again
    assert [r.seq for r in parse_event_records(json.dumps(again).encode(), 2, numbering)] == [1, 2, 3]
    only_new = [{"type": "d", "message": "4"}]  # one that honours it sends only what is new
    assert [r.seq for r in parse_event_records(json.dumps(only_new).encode(), 3, numbering)] == [4]


def test_metrics_without_name_are_dropped_and_without_step_numbered() -> None:
    points = parse_metrics([{"name": "loss", "step": 1, "value": 0.5}, {"step": 2, "value": 1.0},
                            {"name": "x", "value": 1.0}, {"name": "gepa.status", "step": 1, "value": "running"},
                            {"name": "loss", "value": 0.4}])
    assert [(p.name, p.step) for p in points] == [("loss", 1), ("x", 1), ("loss", 2)]
    assert extract_list({"points": []}, "points") == []


def test_a_metric_page_says_which_points_could_not_be_read_and_why() -> None:
    body = {"points": [{"name": "loss", "step": "3", "value": "0.25"}, {"step": 2, "value": 1.0}, [1],
                       {"name": "gepa.status", "step": 1, "value": "running"}, {"name": "loss", "step": 2.5, "value": 1},
                       {"name": "loss", "step": 4, "value": 0.2, "data": "not an object"}]}
    page = parse_metrics_body(json.dumps(body).encode())
    assert [(r.name, r.step, r.value) for r in page] == [("loss", 3, 0.25)]
    assert [u["reason"] for u in page.unreadable] == ["no name", "not an object", "value not a number",
                                                       "step not a whole number", "fields of unexpected types"]
    assert page.unreadable[1]["raw"] == [1]
    assert parse_metrics_body(b'{"points": [{"name": "loss", "step": 1, "value": 0.5}]}').unreadable == []


def test_the_depth_of_a_long_answer_is_told_by_its_structure() -> None:
    """A page of history is not first counted for brackets: its structure alone says how deep it nests."""
    from synth_nb.client._bounds import MAX_DEPTH, too_deep

    shallow = b'{"events":[' + b",".join([b'{"seq":1,"data":{"a":[1,{"b":"[[[[\\"{{"}]}}'] * 5000) + b"]}"

    def nested(levels: int) -> bytes:  # a long answer whose events list holds ``levels`` nested lists
        return b'{"events":[' + b"[" * levels + b"]" * levels + b'],"pad":"' + b" " * 70_000 + b'"}'

    assert len(shallow) > 64 * 1024 and not too_deep(shallow)
    assert too_deep(nested(2 * MAX_DEPTH)) and not too_deep(nested(MAX_DEPTH // 2))
