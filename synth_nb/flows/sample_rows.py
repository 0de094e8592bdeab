"""What a job's samples (RL rollouts, SFT completions) are and how each door names their fields.

``SampleSpec`` is a flow's (``Flow.sample_spec``): which events carry samples and how one becomes a row;
``SampleFilter`` says which of them to show; the helpers read a backend's values defensively (a field of the wrong type is missing, a text
is cut to ``MAX_TEXT_CHARS``). ``synth_nb.flows.samples`` shows them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_HTML_ROWS", "MAX_TEXT_CHARS", "SampleFilter", "SampleSpec", "as_int", "as_number", "as_text", "fmt",
           "row_label"]

#: the longest text a row keeps (the embedded backend already sends at most 2,000 characters)
MAX_TEXT_CHARS = 4000
#: rows a notebook output lists (the newest steps first); the rest are counted and left to the DataFrame
MAX_HTML_ROWS = 100


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def as_text(value: Any) -> tuple[str, int]:
    """Backend text as a row keeps it (cut to ``MAX_TEXT_CHARS``) and its length as sent; anything but a
    string is no text."""
    text = value if isinstance(value, str) else ""
    return (text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS] + "…"), len(text)


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {fmt(v, 2)}" for k, v in value.items()) or "—"
    return str(value)


@dataclass(frozen=True)
class SampleFilter:
    """Which rows to show: every given condition holds; ``worst``/``best`` then keep that many by score."""

    step: int | None = None
    seed: int | None = None
    #: "train" / "eval" (RL); None: both
    phase: str | None = None
    min_score: float | None = None
    max_score: float | None = None
    worst: int | None = None
    best: int | None = None

    def describe(self, score: str) -> str:
        parts = [f"step {self.step}" if self.step is not None else "", f"seed {self.seed}" if self.seed is not None
                 else "", self.phase or "", f"{score} ≥ {self.min_score:g}" if self.min_score is not None else "",
                 f"{score} ≤ {self.max_score:g}" if self.max_score is not None else "",
                 f"worst {self.worst}" if self.worst else "", f"best {self.best}" if self.best else ""]
        return ", ".join(p for p in parts if p)


@dataclass(frozen=True)
class SampleSpec:
    """What one flow's samples are: the events they arrive as, how one becomes a row, and how each door
    names a row's fields."""

    #: "rollouts" / "samples": the name of the view (``job.rollouts()``) and of the bundle's file
    kind: str
    #: plain words for a title ("RL rollouts")
    title: str
    #: the event types that carry one sample each
    event_types: frozenset[str]
    #: one event's ``data`` (anything a backend sent) as a row: a dict with every field, read defensively
    row: Callable[[Any], dict[str, Any]]
    #: (key, label) of the short fields a table lists, in order
    columns: tuple[tuple[str, str], ...]
    #: (key, label) of the long texts a row opens to
    texts: tuple[tuple[str, str], ...]
    #: the number that ranks rows (best / worst), and what it is called
    score_key: str
    score_label: str
    #: the phase whose latest step is highlighted (None: every row)
    highlight_phase: str | None = None
    #: what the figures measure, said under the title
    notes: tuple[str, ...] = ()


def row_label(src: SampleSpec, row: Mapping[str, Any]) -> str:
    """One line naming a row and its short fields: ``step 3 · seed 8 · reward 0.125 · …``."""
    return " · ".join(f"{label} {fmt(row.get(key))}" for key, label in src.columns if row.get(key) is not None)
