"""``RecordLog``: the base of a job's logs (``synth_nb.job.logs``), records kept as columns, read as models.

Rows are appended in arrival order and read in key order (``KeyOrder``); an item is a pydantic model rebuilt
from its JSON document on access (the newest ones kept built), so a log costs its compressed documents and a
few integers per record, and bulk readers read the columns (``column_numbers``, ``column_strings``).
"""

from __future__ import annotations

import bisect
import functools
import operator
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar, Generic, TypeVar, overload

from synth_nb.job.columns import DocumentColumn, KeyOrder, StringColumn
from synth_nb.records import Event, MetricPoint

__all__ = ["RecordLog", "column_numbers", "column_strings"]

T = TypeVar("T", Event, MetricPoint)
#: models kept built for repeated access (a panel re-reads the newest events several times a second)
BUILT_CACHE = 1024


class RecordLog(Sequence[T], Generic[T]):
    """Rows appended in arrival order, read in key order; an item is a model rebuilt from its document."""

    #: a record's key (an ``operator.attrgetter``: no Python frame per call)
    _record_key: ClassVar[operator.attrgetter[Any]]

    def __init__(self, model: type[T], order: KeyOrder) -> None:
        self._model: type[T] = model
        self._docs = DocumentColumn()
        self._order = order
        self._cached: Callable[[int], T] = functools.lru_cache(maxsize=BUILT_CACHE)(self._build)

    def _build(self, row: int) -> T:
        return self._model.model_validate_json(self._docs[row])

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self._cached(self._order.row_at(p)) for p in range(*index.indices(len(self)))]
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"{type(self).__name__} index out of range")
        return self._cached(self._order.row_at(index % n))

    def __iter__(self) -> Iterator[T]:
        return self._built(self.snapshot())

    def __reversed__(self) -> Iterator[T]:
        for position in range(len(self) - 1, -1, -1):
            yield self._cached(self._order.row_at(position))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} items, {self.nbytes:,} bytes)"

    def snapshot(self) -> Sequence[int]:
        """The rows there are now, in key order; rows added later do not appear in it."""
        rows = self._order.rows()
        return rows if isinstance(rows, range) else array("q", rows)

    def models(self, rows: Iterable[int]) -> Iterator[T]:
        """The models of ``rows`` (from ``snapshot``), built one at a time."""
        return self._built(rows)

    def _built(self, rows: Iterable[int]) -> Iterator[T]:
        build = self._build
        for row in rows:
            yield build(row)

    @property
    def nbytes(self) -> int:
        """Bytes held by the columns (documents, keys, order)."""
        return self._docs.nbytes + self._order.nbytes + self._column_bytes()

    def _column_bytes(self) -> int:
        raise NotImplementedError

    # -- adding rows (each log: ``add`` one record, ``_append`` a run of them past the newest key) --------

    def add(self, record: Any) -> bool:
        raise NotImplementedError

    def _append(self, records: Sequence[Any], keys: Sequence[Any]) -> None:
        raise NotImplementedError

    def extend(self, records: Sequence[Any]) -> Sequence[Any]:
        """``add`` each record, in key order; returns those kept. Records past the newest key held, in
        ascending key order with no key twice (what a page of history is), are stored column-wise at once:
        a page costs a few C-level passes instead of a Python call chain per record."""
        if len(records) == 1:  # one SSE frame
            return records if self.add(records[0]) else ()
        ordered: list[Any] = sorted(records, key=self._record_key)  # stable: of two equal keys the first one is kept
        keys: list[Any] = [*map(self._record_key, ordered)]
        split = bisect.bisect_right(keys, self._order.last_key) if len(self) else 0
        kept = [record for record in ordered[:split] if self.add(record)]  # behind the newest: one at a time
        tail, tail_keys = ordered[split:], keys[split:]
        if all(map(operator.lt, tail_keys, tail_keys[1:])):
            if tail:
                self._append(tail, tail_keys)
            return kept + tail if kept else tail
        return kept + [record for record in tail if self.add(record)]

    def _in_order(self, values: Any) -> Any:
        """A numpy column (by row) reordered into key order."""
        import numpy as np

        rows = self._order.rows()
        return values if isinstance(rows, range) else values[np.array(rows, dtype=np.int64)]


def column_numbers(values: array[Any]) -> Any:
    """A copy of a column as a numpy array (a view would pin the column: it could no longer grow)."""
    import numpy as np

    return np.frombuffer(values, dtype=values.typecode).copy() if values else np.array([], dtype=values.typecode)


def column_strings(column: StringColumn) -> Any:
    """A string column as a numpy object array sharing one Python string per distinct value."""
    import numpy as np

    if not column.values:
        return np.array([], dtype=object)
    return np.array(column.values, dtype=object)[column_numbers(column.codes)]
