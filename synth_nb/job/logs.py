"""``EventLog`` and ``MetricLog``: a job's events and metric points, deduplicated, ordered, and compact.

Each is a read-only ``Sequence`` of pydantic models (``Event`` / ``MetricPoint``) whose items are rebuilt
from their JSON on access, so code that looks at a few of them (the newest events, the last point of a
metric) is unchanged, while bulk readers (DataFrames, series) read the columns. An event costs its
compressed JSON text and four integers (tens of bytes) where a pydantic model costs a few kilobytes.
What both share (the columns, the key order, models built on access) is ``synth_nb.job.record_log``'s.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import operator
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import msgspec

from synth_nb.client import EventRecord, MetricRecord
from synth_nb.job import event_fields as shapes
from synth_nb.job.columns import CHUNK_ROWS, KeyOrder, StringColumn
from synth_nb.job.event_fields import EVENT_DATAS, EVENT_FIELDS, EventData, EventFields, fields_of
from synth_nb.job.record_log import RecordLog, column_numbers, column_strings
from synth_nb.job.sample_index import SampleIndex
from synth_nb.records import Event, MetricPoint

__all__ = ["EventLog", "MetricLog"]


class MetricSample(msgspec.Struct, frozen=True, gc=False):
    """A metric point's name, step and value: what a chart reads of it."""

    name: str
    step: int
    value: float


_TYPE, _LEVEL, _DOCUMENT = map(operator.attrgetter, ("type", "level", "document"))


class EventLog(RecordLog[Event]):
    """A job's events in seq order, each seq once."""

    def __init__(self) -> None:
        self._seq = array("q")
        self._type = StringColumn()
        self._level = StringColumn()
        #: step, seed, phase and score of each sample event (``index_samples``), None: none indexed
        self.samples: SampleIndex | None = None
        #: the data ``data_of_types`` read, by type codes and length, while ``reading_once``
        self._read_once: dict[tuple[frozenset[int], int], list[dict[str, Any]]] | None = None
        super().__init__(Event, KeyOrder(self._seq.__getitem__, self._seq))

    def index_samples(self, types: Iterable[str], score_key: str) -> SampleIndex:
        """Keep a ``SampleIndex`` of the events of ``types`` (those held already, and each one added)."""
        index = self.samples = SampleIndex(types, score_key)
        wanted = {code for code in map(self._type.code_of, index.types) if code is not None}
        for row, code in enumerate(self._type.codes):
            if code in wanted:
                index.add(row, self._seq[row], self._docs[row])
        return index

    def data_at(self, rows: Iterable[int]) -> list[Any]:
        """The ``data`` of the events at ``rows`` (arrival rows, as ``SampleIndex`` keeps them)."""
        out = []
        for row in rows:
            try:
                out.append(shapes.ANY_EVENT_DATA.decode(self._docs[row]).data)
            except (msgspec.DecodeError, ValueError):  # NaN or Infinity, which strict JSON lacks
                doc = json.loads(self._docs[row])
                out.append(doc.get("data") if isinstance(doc, dict) else None)
        return out

    @property
    def last_seq(self) -> int:
        """The highest seq held (0 when empty)."""
        return self._order.last_key or 0

    def add(self, record: EventRecord) -> bool:
        """Keep ``record`` unless its seq is already held."""
        position = self._order.find(record.seq)
        if position is None:
            return False
        self._seq.append(record.seq)
        self._type.append(record.type)
        self._level.append(record.level)
        self._docs.append(record.document)
        self._order.insert(position, len(self._seq) - 1, record.seq)
        if self.samples is not None and record.type in self.samples.types:
            self.samples.add(len(self._seq) - 1, record.seq, record.document)
        return True

    _record_key = operator.attrgetter("seq")

    def _append(self, records: Sequence[EventRecord], keys: Sequence[int]) -> None:
        first = len(self._seq)
        self._seq.extend(keys)
        types = [*map(_TYPE, records)]  # attribute getters in C: a page is ten thousand records
        self._type.extend(types)
        self._level.extend([*map(_LEVEL, records)])
        self._docs.extend([*map(_DOCUMENT, records)])
        self._order.extend(first, len(records), keys[-1])
        index = self.samples
        if index is not None and not index.types.isdisjoint(types):
            for row, record in enumerate(records, first):
                if record.type in index.types:
                    index.add(row, record.seq, record.document)

    def of_types(self, types: Iterable[str]) -> Iterator[Event]:
        """Events whose type is one of ``types``, in seq order; no other event is built."""
        wanted = {code for code in map(self._type.code_of, types) if code is not None}
        codes = self._type.codes
        return self._built(row for row in self.snapshot() if codes[row] in wanted)

    def data_of_types(self, types: Iterable[str]) -> Iterator[dict[str, Any]]:
        """The ``data`` of the events ``of_types`` gives, read from their documents without building the events
        (a finished RL job's final block sums the rollouts of every step event: 200,000 models, seconds).
        When they are most of the log, its documents are read a chunk at a time (``fields``)."""
        wanted = {code for code in map(self._type.code_of, types) if code is not None}
        if not wanted:  # no event of these types: no row is looked at
            return iter(())
        shared = self._read_once
        if shared is None:
            return self._data_of_codes(wanted)
        key = (frozenset(wanted), len(self))
        if key not in shared:
            shared[key] = list(self._data_of_codes(wanted))
        return iter(shared[key])

    @contextlib.contextmanager
    def reading_once(self) -> Iterator[None]:
        """Within it, ``data_of_types`` of the same types decodes their events once: a job's ending reads its step
        events' data for its usage and again for its health rules (a million events, a second each). What was
        read is let go at its end (kept, it would hold every event's data)."""
        if self._read_once is not None:  # nested: the outer one lets go
            yield
            return
        self._read_once = {}
        # what is read is a million small dicts, none in a cycle: collections while they are made find nothing
        # and walked them all, again and again (a third of a million-event ending's time)
        collecting = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            self._read_once = None
            if collecting:
                gc.enable()

    def _data_of_codes(self, wanted: set[int]) -> Iterator[dict[str, Any]]:
        codes, docs, decode = self._type.codes, self._docs, shapes.EVENT_DATA.decode
        if isinstance(self._order.rows(), range) and sum(map(wanted.__contains__, codes)) * 4 > len(self):
            names = {self._type.values[code] for code in wanted}
            return (item.data for item in self.datas() if item.type in names)
        return (decode(docs[row]).data for row in self.snapshot() if codes[row] in wanted)

    def datas(self) -> Iterator[EventData]:
        """Every event's ``EventData`` (type, message, data), in seq order, a chunk of documents decoded at once
        (``fields``, with the data of each event decoded too)."""
        return self._chunked(EVENT_DATAS, lambda e: EventData(e.type, e.message, e.data))

    def fields(self) -> Iterator[EventFields]:
        """Every event's ``EventFields``, in seq order: a chunk of documents decoded at once, about twenty times
        cheaper than building each event (``benchmarks/attach.py``: a million-event ``--all-events``). Events
        held out of seq order, or a chunk strict JSON cannot read (``NaN``), are read one event at a time."""
        return self._chunked(EVENT_FIELDS, fields_of)

    def field_chunks(self) -> Iterator[tuple[list[EventFields], bytes | bytearray | None]]:
        """``fields`` a chunk at a time, each with the JSON text its events were decoded from (their documents
        joined by commas), so a reader of every event can look at a chunk's text once instead of at each
        event's (``--all-events``: is a noise word anywhere in it); None where events were read one at a time."""
        return self._chunks(EVENT_FIELDS, fields_of)

    def _chunked(self, decoder: msgspec.json.Decoder[list[Any]], of_event: Callable[[Event], Any]) -> Iterator[Any]:
        """Every event decoded by ``decoder`` a chunk at a time, in seq order (``_chunks``, one by one)."""
        for decoded, _ in self._chunks(decoder, of_event):
            yield from decoded

    def _chunks(self, decoder: msgspec.json.Decoder[list[Any]], of_event: Callable[[Event], Any]
                ) -> Iterator[tuple[list[Any], bytes | bytearray | None]]:
        """Every event decoded by ``decoder`` a chunk at a time, in seq order, with the chunk's text; ``of_event``
        of the built event where that cannot be done (events out of seq order, a chunk with NaN), text None."""
        if not isinstance(self._order.rows(), range):
            built = map(of_event, self._built(self.snapshot()))
            while batch := list(itertools.islice(built, CHUNK_ROWS)):
                yield batch, None
            return
        end = len(self)  # the events there are now (as ``snapshot``): rows added meanwhile are not read
        for first, count, body in self._docs.chunks():
            if first >= end:
                return
            try:
                decoded = decoder.decode(b"[" + body + b"]")
            except (msgspec.DecodeError, msgspec.ValidationError):
                yield [of_event(self._build(row)) for row in range(first, min(end, first + count))], None
                continue
            if first + count > end:  # the open chunk grew meanwhile: its text holds events not read
                yield decoded[:end - first], None
                return
            yield decoded, body

    def last_error(self) -> Event | None:
        """The newest event that ``Event.is_error``; each distinct (type, level) pair is judged once."""
        verdicts: dict[tuple[int, int], bool] = {}
        types, levels = self._type, self._level
        for position in range(len(self) - 1, -1, -1):
            row = self._order.row_at(position)
            pair = (types.codes[row], levels.codes[row])
            verdict = verdicts.get(pair)
            if verdict is None:
                verdict = verdicts[pair] = Event(seq=0, type=types.values[pair[0]],
                                                 level=levels.values[pair[1]]).is_error
            if verdict:
                return self._cached(row)
        return None

    def to_frame(self) -> Any:
        """A DataFrame with one row per event: seq, type, level, message, data, created_at."""
        import pandas as pd

        texts = self._docs.decode_all(shapes.EVENT_TEXTS)
        rows = self.snapshot()
        return pd.DataFrame({
            "seq": self._in_order(column_numbers(self._seq)), "type": self._in_order(column_strings(self._type)),
            "level": self._in_order(column_strings(self._level)), "message": [texts[r].message for r in rows],
            "data": [texts[r].data for r in rows], "created_at": [texts[r].created_at for r in rows],
        })

    def _column_bytes(self) -> int:
        return self._seq.itemsize * len(self._seq) + self._type.nbytes + self._level.nbytes


class MetricLog(RecordLog[MetricPoint]):
    """A job's metric points in (step, name) order, each (name, step) once."""

    def __init__(self) -> None:
        self._name = StringColumn()
        self._step = array("q")
        self._value = array("d")
        #: per metric name: the row of its highest step
        self._latest: dict[str, int] = {}
        super().__init__(MetricPoint, KeyOrder(self._key))

    def _key(self, row: int) -> tuple[int, str]:
        return self._step[row], self._name[row]

    def add(self, record: MetricRecord) -> bool:
        """Keep ``record`` unless a point with its name and step is already held."""
        key = (record.step, record.name)
        position = self._order.find(key)
        if position is None:
            return False
        row = len(self._step)
        self._name.append(record.name)
        self._step.append(record.step)
        self._value.append(record.value)
        self._docs.append(record.document)
        self._order.insert(position, row, key)
        latest = self._latest.get(record.name)
        if latest is None or record.step > self._step[latest]:
            self._latest[record.name] = row
        return True

    _record_key = operator.attrgetter("step", "name")

    def holds(self, name: str, step: int) -> bool:
        """Whether a point with this name and step is held."""
        return self._order.find((step, name)) is None

    def _append(self, records: Sequence[MetricRecord], keys: Sequence[tuple[int, str]]) -> None:
        first = len(self._step)
        names = [r.name for r in records]
        self._name.extend(names)
        self._step.extend([r.step for r in records])
        self._value.extend([r.value for r in records])
        self._docs.extend([r.document for r in records])
        self._order.extend(first, len(records), keys[-1])
        # keys ascend past every held key, so each name's last row here is its highest step yet
        self._latest.update(zip(names, range(first, first + len(records)), strict=True))

    @property
    def last_steps(self) -> dict[str, int]:
        """The highest step seen per metric name."""
        return {name: self._step[row] for name, row in self._latest.items()}

    def latest(self) -> dict[str, MetricPoint]:
        """The point with the highest step of each metric name."""
        return {name: self._build(row) for name, row in self._latest.items()}

    def samples(self) -> Iterator[MetricSample]:
        """Every point's name, step and value, in (step, name) order, read from the columns (no point built:
        a chart of a long job's history takes them by the hundred thousand)."""
        names, codes, steps, values = self._name.values, self._name.codes, self._step, self._value
        return (MetricSample(names[codes[row]], steps[row], values[row]) for row in self.snapshot())

    def series(self, name: str) -> tuple[Any, Any]:
        """``(steps, values)`` of one metric as numpy arrays, in step order."""
        code = self._name.code_of(name)
        if code is None:  # a name never sent: no column is copied (a chart asks for each name it knows)
            return column_numbers(self._step[:0]), column_numbers(self._value[:0])
        steps, values = self._in_order(column_numbers(self._step)), self._in_order(column_numbers(self._value))
        mask = self._in_order(column_numbers(self._name.codes)) == code
        return steps[mask], values[mask]

    def to_frame(self) -> Any:
        """A DataFrame with one row per point: name, step, value, epoch, data, created_at."""
        import pandas as pd

        texts = self._docs.decode_all(shapes.METRIC_TEXTS)
        rows = self.snapshot()
        return pd.DataFrame({
            "name": self._in_order(column_strings(self._name)), "step": self._in_order(column_numbers(self._step)),
            "value": self._in_order(column_numbers(self._value)), "epoch": [texts[r].epoch for r in rows],
            "data": [texts[r].data for r in rows], "created_at": [texts[r].created_at for r in rows],
        })

    def _column_bytes(self) -> int:
        return (self._name.nbytes + self._step.itemsize * len(self._step)
                + self._value.itemsize * len(self._value))
