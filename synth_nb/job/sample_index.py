"""``SampleIndex``: the few numbers of each sample event (step, seed, phase, score) kept as columns.

A 10,000-step RL job streams about 100,000 ``rl.rollout.sampled`` events. Reading them all again for every
view (decoding 50 MB of JSON, building a row each) took seconds; so as each such event is taken into a job's
``EventLog``, its step, seed, phase and score are read once into arrays (about 40 bytes a sample), and a
view filters and ranks with them, then builds full rows only for what it shows (``EventLog.data_at``).
Values of the wrong type (a backend other than the embedded one may send anything) are kept as missing.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable
from typing import Any

import msgspec

__all__ = ["MISSING", "SampleIndex"]

#: a missing whole number in the integer columns
MISSING = -(2**63)


class _Keys(msgspec.Struct):
    data: Any = None


_KEYS = msgspec.json.Decoder(_Keys)


def _whole(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**62 else MISSING


def _real(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else math.nan


class SampleIndex:
    """Per sample event, in arrival order: its row in the log, seq, step, seed, phase code and score."""

    def __init__(self, types: Iterable[str], score_key: str) -> None:
        self.types = frozenset(types)
        self.score_key = score_key
        self.rows = array("q")
        self.seqs = array("q")
        self.steps = array("q")
        self.seeds = array("q")
        self.scores = array("d")
        self.phase_codes = array("b")
        #: phase names by code (0: none)
        self.phases: list[str | None] = [None]

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def nbytes(self) -> int:
        return sum(a.itemsize * len(a) for a in (self.rows, self.seqs, self.steps, self.seeds, self.scores,
                                                  self.phase_codes))

    def add(self, row: int, seq: int, document: bytes) -> None:
        try:
            data = _KEYS.decode(document).data
        except (msgspec.DecodeError, ValueError):
            data = None
        data = data if isinstance(data, dict) else {}
        phase = data.get("phase")
        phase = phase[:32] if isinstance(phase, str) else None
        if phase not in self.phases:
            if len(self.phases) >= 100:  # a backend inventing phases: the rest count as none
                phase = None
            else:
                self.phases.append(phase)
        self.rows.append(row)
        self.seqs.append(seq)
        self.steps.append(_whole(data.get("step")))
        self.seeds.append(_whole(data.get("seed")))
        self.scores.append(_real(data.get(self.score_key)))
        self.phase_codes.append(self.phases.index(phase))

    def columns(self) -> dict[str, Any]:
        """numpy copies of the columns, in seq order: ``rows``, ``step``, ``seed``, ``phase`` (codes),
        ``score`` (NaN: missing); the integer columns hold ``MISSING`` where a value is missing."""
        import numpy as np

        def of(values: array[Any]) -> Any:
            return np.frombuffer(values, dtype=values.typecode).copy() if values else np.array([], dtype=values.typecode)

        order = np.argsort(of(self.seqs), kind="stable")
        return {"rows": of(self.rows)[order], "step": of(self.steps)[order], "seed": of(self.seeds)[order],
                "phase": of(self.phase_codes)[order], "score": of(self.scores)[order]}
