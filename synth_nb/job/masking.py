"""Secrets a backend echoes back (a key in an event message, a body repeated in a status) are masked as a
job's history takes them in, so no view of the job (CLI lines, notebook panel, DataFrames, recordings,
summaries, saved notebooks) can show them: they are never held in clear in the first place.

Values shorter than ``MIN_SEARCHED`` characters are not searched for: a short test key such as ``"k"``
would match inside ordinary words and key names (and break the key-name masking of recordings).
"""

from __future__ import annotations

import json
import operator
from collections.abc import Sequence
from typing import Any

from synth_nb.client import EventRecord
from synth_nb.records import Event
from synth_nb.secrets import mask, mask_text

__all__ = ["MIN_SEARCHED", "masked_doc", "masked_event", "masked_events", "searched"]

MIN_SEARCHED = 8


def searched(values: Sequence[str]) -> tuple[str, ...]:
    """The values worth searching for, longest first, each once."""
    return tuple(sorted({v for v in values if len(v) >= MIN_SEARCHED}, key=len, reverse=True))


def masked_event(event: Event | EventRecord, hidden: Sequence[str]) -> Event | EventRecord:
    """``event`` with every value of ``hidden`` in its document masked (the same object when none occurs)."""
    record = event if isinstance(event, EventRecord) else EventRecord.of(event)
    masked = _masked_record(record, hidden)
    return event if masked is record else masked


def _masked_record(record: EventRecord, hidden: Sequence[str]) -> EventRecord:
    document = record.document
    found = [raw for raw in hidden if raw.encode() in document]
    if not found:
        return record
    for raw in found:
        document = document.replace(raw.encode(), mask(raw).encode())
    return EventRecord(seq=record.seq, type=record.type, level=record.level, document=document)


def masked_events(records: Sequence[EventRecord], hidden: Sequence[str]) -> Sequence[EventRecord]:
    """A page of records with ``hidden`` masked, looked for in the whole page at once (the same page
    when none occurs, which is nearly always)."""
    if not hidden or not records:
        return records
    page = records[0].document if len(records) == 1 else b"\n".join(map(operator.attrgetter("document"), records))
    if not any(raw.encode() in page for raw in hidden):
        return records
    return [_masked_record(record, hidden) for record in records]


def masked_doc(doc: dict[str, Any], hidden: Sequence[str]) -> dict[str, Any]:
    """A status document with every value of ``hidden`` masked (the same dict when none occurs)."""
    if not hidden:
        return doc
    text = json.dumps(doc, ensure_ascii=False, default=str)
    if not any(raw in text for raw in hidden):
        return doc
    masked: dict[str, Any] = json.loads(mask_text(text, tuple(hidden)))
    return masked
