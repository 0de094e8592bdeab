"""Numbers for what the backend sent without one: event seqs and metric steps.

synth-ai 0.2.24 numbers an event without a seq ``last + 1`` and tells metric points without a step apart by
their time or content. A backend that ignores ``since_seq`` / ``after_step`` sends the same items again on
every poll, so each item is recognised by its content and keeps the number it was first given.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["SeqNumbering", "StepNumbering"]


def _digest(item: Any) -> bytes:
    return hashlib.blake2b(json.dumps(item, sort_keys=True, default=str).encode(), digest_size=16).digest()


class SeqNumbering:
    """Seqs for events sent without one: the next after the cursor, as synth-ai 0.2.24 numbers them.

    A backend that ignores ``since_seq`` sends its whole list again on every poll; an event met before is
    recognised by its content and keeps the seq it was given, so nothing is shown twice. (Two events equal
    in every field, time included, are taken for one.)
    """

    def __init__(self) -> None:
        self._given: dict[bytes, int] = {}
        self._top = 0

    def seq_for(self, item: Any, running: int) -> int:
        key = _digest(item)
        seq = self._given.get(key)
        if seq is None:
            seq = self._given[key] = max(running, self._top) + 1
        self.seen(seq)
        return seq

    def seen(self, seq: int) -> None:
        self._top = max(self._top, seq)


class StepNumbering:
    """Steps for metric points sent without one: the next of their name, each point recognised when sent again
    (by its time when it has one, else its content)."""

    def __init__(self) -> None:
        self._given: dict[tuple[str, bytes], int] = {}
        self._top: dict[str, int] = {}

    def step_for(self, point: dict[str, Any]) -> int:
        name = str(point.get("name"))
        when = next((point[k] for k in ("created_at", "updated_at", "timestamp") if point.get(k) not in (None, "")),
                    None)
        key = (name, _digest([when, point.get("value")] if when is not None else point))
        step = self._given.get(key)
        if step is None:
            step = self._given[key] = self._top.get(name, 0) + 1
        self.seen(name, step)
        return step

    def seen(self, name: str, step: int) -> None:
        self._top[name] = max(self._top.get(name, step), step)
