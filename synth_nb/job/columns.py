"""Compact, append-only columns for a job's history: no Python object is kept per record.

A million events held as pydantic models cost gigabytes; held here they cost their compressed JSON text
plus a few machine integers each. Rows are only ever appended, so a row number never changes;
``KeyOrder`` keeps them in key order, which is the arrival order until a row arrives out of order.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import operator
import zlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import msgspec

__all__ = ["DocumentColumn", "KeyOrder", "StringColumn"]

#: how far back from the end an out-of-order key is looked for before bisecting
_SCAN_BACK = 8
#: a chunk of documents is compressed once it has this many rows or bytes
CHUNK_ROWS = 256
CHUNK_BYTES = 256 * 1024
#: inflated chunks kept for repeated reads
INFLATED_CHUNKS = 4


class DocumentColumn:
    """JSON documents, zlib-compressed in chunks of consecutive rows; the newest chunk stays open.

    Consecutive documents of one job repeat their keys and most values, so a chunk shrinks 5-15x. Reading
    one row inflates its chunk (a few hundred microseconds; the last few are kept inflated).
    """

    def __init__(self) -> None:
        self._sealed: list[bytes] = []
        self._sealed_bytes = 0
        #: first row of each sealed chunk
        self._first_rows = array("q")
        self._open = bytearray()
        self._open_first = 0
        #: where each row's document ends within its chunk
        self._ends = array("q")
        self._inflated: Callable[[int], bytes] = functools.lru_cache(maxsize=INFLATED_CHUNKS)(self._inflate)

    def __len__(self) -> int:
        return len(self._ends)

    @property
    def nbytes(self) -> int:
        return (self._sealed_bytes + len(self._open) + self._ends.itemsize * len(self._ends)
                + self._first_rows.itemsize * len(self._first_rows))

    def append(self, document: bytes) -> None:
        body = self._open
        if body:  # documents are never empty
            body += b","
        body += document
        self._ends.append(len(body))
        if len(body) >= CHUNK_BYTES or len(self._ends) - self._open_first >= CHUNK_ROWS:
            self._seal()

    def extend(self, documents: Sequence[bytes]) -> None:
        """``append`` each of ``documents``, a chunk's worth joined at once (the same chunks as one by one)."""
        done = 0
        while done < len(documents):
            room = CHUNK_ROWS - (len(self._ends) - self._open_first)
            group = documents[done:done + room]
            done += len(group)
            body = self._open
            if len(body) + sum(map(len, group)) + len(group) >= CHUNK_BYTES:
                for document in group:  # the byte limit falls inside this group
                    self.append(document)
                continue
            offset = len(body) + 1 if body else 0
            if body:
                body += b","
            body += b",".join(group)
            # row k ends at the offset plus the lengths of documents 0..k plus k commas (C-level iterators)
            lengths = itertools.islice(itertools.accumulate(map(len, group), initial=offset), 1, None)
            self._ends.extend(map(operator.add, lengths, itertools.count()))
            if len(self._ends) - self._open_first >= CHUNK_ROWS:
                self._seal()

    def __getitem__(self, row: int) -> bytes:
        body: bytes | bytearray
        if row >= self._open_first:
            body, first = self._open, self._open_first
        else:
            chunk = bisect.bisect_right(self._first_rows, row) - 1
            body, first = self._inflated(chunk), self._first_rows[chunk]
        start = self._ends[row - 1] + 1 if row > first else 0
        return bytes(body[start:self._ends[row]])

    def chunks(self) -> Iterator[tuple[int, int, bytes | bytearray]]:
        """``(first row, rows, the documents joined by commas)`` of every chunk, in row order (each sealed one
        inflated once, not kept), so a reader of every row decodes a chunk at a time."""
        bounds = [*self._first_rows, self._open_first]
        for chunk, packed in enumerate(self._sealed):
            yield bounds[chunk], bounds[chunk + 1] - bounds[chunk], zlib.decompress(packed)
        if self._open:
            yield self._open_first, len(self._ends) - self._open_first, self._open

    def decode_all(self, decoder: msgspec.json.Decoder[Any]) -> list[Any]:
        """Every document, in row order, decoded by ``decoder`` (which reads a JSON array of them).

        A chunk with ``NaN`` or ``Infinity`` (which strict JSON lacks) goes through ``json`` instead.
        """
        decoded: list[Any] = []
        bodies: list[bytes | bytearray] = [*map(zlib.decompress, self._sealed), self._open]
        for body in bodies:
            if body:
                text = b"[" + body + b"]"
                try:
                    decoded += decoder.decode(text)
                except msgspec.DecodeError:
                    decoded += msgspec.convert(json.loads(text), decoder.type)
        return decoded

    def _seal(self) -> None:
        packed = zlib.compress(self._open, 1)
        self._sealed.append(packed)
        self._sealed_bytes += len(packed)
        self._first_rows.append(self._open_first)
        self._open = bytearray()
        self._open_first = len(self._ends)

    def _inflate(self, chunk: int) -> bytes:
        return zlib.decompress(self._sealed[chunk])


class StringColumn:
    """Strings that repeat (event types, levels, metric names), stored as small integer codes."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._code: dict[str, int] = {}
        self.codes = array("I")

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, row: int) -> str:
        return self.values[self.codes[row]]

    @property
    def nbytes(self) -> int:
        return self.codes.itemsize * len(self.codes)

    def code_of(self, value: str) -> int | None:
        return self._code.get(value)

    def append(self, value: str) -> None:
        code = self._code.get(value)
        if code is None:
            code = self._code[value] = len(self.values)
            self.values.append(value)
        self.codes.append(code)

    def extend(self, values: Sequence[str]) -> None:
        codes = self._code
        for value in dict.fromkeys(values):  # the distinct values, in order of first appearance
            if value not in codes:
                codes[value] = len(self.values)
                self.values.append(value)
        self.codes.extend(map(codes.__getitem__, values))


class _KeysInOrder:
    """The keys of a ``KeyOrder`` by position, for ``bisect``."""

    def __init__(self, order: KeyOrder) -> None:
        self._order = order

    def __len__(self) -> int:
        return len(self._order)

    def __getitem__(self, position: int) -> Any:
        return self._order.key_at(position)


class KeyOrder:
    """The order of append-only rows by a unique key (an int, or a tuple compared field by field).

    A *position* is an index in key order, a *row* an index in arrival order. Until a row arrives out of
    order the two are the same and nothing is stored; from then on a permutation (8 bytes a row) is kept.
    Finding a key costs O(1) at the end or next to the previous look-up, O(log n) elsewhere.
    """

    def __init__(self, key_of_row: Callable[[int], Any], arrival_keys: Sequence[Any] | None = None) -> None:
        self._key_of_row = key_of_row
        #: the keys by row, when they can be bisected directly (while rows are in arrival order)
        self._arrival_keys = arrival_keys
        self._rows: array[int] | None = None
        self._count = 0
        self._last: Any = None
        self._finger = 0
        self._keys = _KeysInOrder(self)

    def __len__(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        return 0 if self._rows is None else self._rows.itemsize * len(self._rows)

    @property
    def last_key(self) -> Any:
        """The largest key placed (None before any)."""
        return self._last

    def row_at(self, position: int) -> int:
        return position if self._rows is None else self._rows[position]

    def key_at(self, position: int) -> Any:
        return self._key_of_row(position if self._rows is None else self._rows[position])

    def rows(self) -> Sequence[int]:
        """Row numbers in key order."""
        return range(self._count) if self._rows is None else self._rows

    def find(self, key: Any) -> int | None:
        """The position where ``key`` belongs, or None when a row with that key is held already."""
        if self._count == 0 or key > self._last:
            return self._count
        if key == self._last:
            return None
        position = self._near(key)
        if position is None:
            keys = self._arrival_keys if self._rows is None and self._arrival_keys is not None else self._keys
            position = bisect.bisect_left(keys, key, 0, self._count)
        self._finger = position + 1
        return None if self.key_at(position) == key else position

    def insert(self, position: int, row: int, key: Any) -> None:
        """Put ``row`` (just stored) at ``position`` (from ``find``); readers see it from now on."""
        if position == self._count:
            self._last = key
            if self._rows is not None:
                self._rows.append(row)
        else:
            if self._rows is None:
                self._rows = array("q", range(self._count))
            self._rows.insert(position, row)
        self._count += 1

    def extend(self, first_row: int, count: int, last_key: Any) -> None:
        """Put ``count`` rows just stored (from ``first_row`` on), whose keys ascend past the last key,
        at the end."""
        if self._rows is not None:
            self._rows.extend(range(first_row, first_row + count))
        self._last = last_key
        self._count += count

    def _near(self, key: Any) -> int | None:
        """Where ``key`` (smaller than the last key) belongs, if that is a few rows from the end or right
        after the previous look-up (metric names sharing a step; a backfill behind newer points)."""
        position = self._count - 1
        for _ in range(_SCAN_BACK):
            if position == 0 or self.key_at(position - 1) < key:
                return position
            position -= 1
        finger = self._finger
        if 0 < finger < self._count and self.key_at(finger - 1) < key <= self.key_at(finger):
            return finger
        return None
