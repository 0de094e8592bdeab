"""What a reader of every event of a long log needs of each, decoded a chunk of documents at a time
(``EventLog.fields`` / ``EventLog.datas``) instead of building every ``Event``: a million events print, or feed
a curve, in a fraction of the time."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from synth_nb.records import Event

__all__ = ["ANY_EVENT_DATA", "EVENT_DATA", "EVENT_DATAS", "EVENT_FIELDS", "EVENT_TEXTS", "METRIC_TEXTS", "EventData",
           "EventFields", "fields_of"]


class EventFields(msgspec.Struct, gc=False):
    """An event's fields as its document holds them, its ``data`` left as the JSON text sent (``data_json``):
    what a reader of every event (``--all-events``, a chart's samples) needs, without building the event."""

    seq: int
    type: str
    level: str = "info"
    message: str = ""
    data_json: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"{}"), name="data")

    def data(self) -> dict[str, Any]:
        """The event's ``data`` (``Event.data``), decoded on asking."""
        try:
            return msgspec.json.decode(self.data_json)
        except msgspec.DecodeError:  # NaN or Infinity, which strict JSON lacks
            return json.loads(bytes(self.data_json))


class EventData(msgspec.Struct, gc=False):
    """An event's type, message and ``data``, decoded together: what a reader of every event's data needs."""

    type: str
    message: str = ""
    data: dict[str, Any] = msgspec.field(default_factory=dict)


EVENT_FIELDS = msgspec.json.Decoder(list[EventFields])
EVENT_DATAS = msgspec.json.Decoder(list[EventData])


# -- the shapes other readers of a log's documents decode: one event's data, every event's texts for a
# DataFrame, every metric point's

class _EventData(msgspec.Struct, gc=False):
    """The ``data`` of an event document (an ``Event``'s JSON, so always an object)."""

    data: dict[str, Any] = {}


EVENT_DATA = msgspec.json.Decoder(_EventData)


class _EventText(msgspec.Struct):
    message: str = ""
    data: dict[str, Any] = msgspec.field(default_factory=dict)
    created_at: str | None = None


class _AnyEventData(msgspec.Struct):
    """An event's ``data`` as sent, whatever it is (a sample view says what it cannot read)."""

    data: Any = None


class _MetricText(msgspec.Struct):
    epoch: int | None = None
    data: dict[str, Any] = msgspec.field(default_factory=dict)
    created_at: str | None = None


EVENT_TEXTS = msgspec.json.Decoder(list[_EventText])
ANY_EVENT_DATA = msgspec.json.Decoder(_AnyEventData)
METRIC_TEXTS = msgspec.json.Decoder(list[_MetricText])


def fields_of(event: Event) -> EventFields:
    """An event's ``EventFields`` from the event (its data written back as JSON)."""
    return EventFields(event.seq, event.type, event.level, event.message,
                       msgspec.Raw(json.dumps(event.data, default=str).encode()))
