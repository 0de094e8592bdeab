"""The override vocabulary as one table: each row is a flag, its type, its help and the wizard field it becomes.

``CORE_ROWS`` are the overrides every flow is asked about (a flow says which it honours in
``Flow.honoured_overrides``); a flow may declare rows of its own (``Flow.override_rows``), with the config
keys they replace, inside its folder. From the rows come the ``Overrides`` model's flag names, the argparse
flags of ``synth-nb train`` and ``%synth_train`` (``synth_nb.pipeline.flags``) and the wizard's fields
(``synth_nb.notebook.wizard_inputs``), which show only the rows the selected flow honours.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["CORE_ROWS", "KINDS", "MAX_COUNT", "OverrideRow", "count_argument", "parse_seeds", "whole_number"]

#: value kinds: what the flag parses and the wizard field checks ("seeds": ``0-79`` or ``0,1,2``)
KINDS = ("text", "int", "bool", "url", "path", "seeds")
#: the most seeds a flag may name (each is at least one rollout): ``0-99999999999`` is a typo, not a plan
MAX_SEEDS = 100_000
#: the largest count a flag takes: what the backend's 64-bit integers hold
MAX_COUNT = 2**63 - 1
_WHOLE = re.compile(r"[+-]?[0-9]+")


def _integer(value: object) -> int:
    """ASCII digits with an optional sign, within 64 bits (``1_0``, ``٣``, ``1.5``, ``10**30`` are refused,
    not read as something else)."""
    text = str(value).strip()
    if _WHOLE.fullmatch(text) is None:
        raise ValueError(f"expected a whole number such as 10, got {text[:40]!r}")
    number = int(text)
    if abs(number) > MAX_COUNT:
        raise ValueError(f"must be at most {MAX_COUNT:,}")
    return number


def whole_number(value: object) -> int:
    """A count typed in a flag or a field, 1 to ``MAX_COUNT``; anything else is a ``ValueError`` saying why."""
    number = _integer(value)
    if number < 1:
        raise ValueError("must be at least 1")
    return number


def count_argument(text: str) -> int:
    """A count flag as an argparse type: a value that is no 64-bit whole number is ``argument --flag: why``
    and exit 2 (whether it is in range for its flag is said where the flag is read)."""
    try:
        return _integer(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_seeds(text: str) -> list[int]:
    """``"0-79"``, ``"0,1,2"`` or ``"0-9,20"`` as a list of seeds; anything else is a ``ValueError``."""
    seeds: list[int] = []
    for part in (p.strip() for p in str(text).split(",")):
        match = re.fullmatch(r"([0-9]+)\s*(?:-\s*([0-9]+))?", part)
        if match is None:
            raise ValueError(f"expected seeds such as 0-79 or 0,1,2, got {part!r}")
        first, last = int(match.group(1)), int(match.group(2) or match.group(1))
        if last < first:
            raise ValueError(f"the range {part} ends before it starts")
        if len(seeds) + last - first + 1 > MAX_SEEDS:
            raise ValueError(f"{text.strip()} names more than {MAX_SEEDS:,} seeds (each one is a rollout)")
        seeds.extend(range(first, last + 1))
    return seeds


@dataclass(frozen=True)
class OverrideRow:
    """One override: its name (the ``Overrides`` field and argparse dest), flag, kind, help and wizard field."""

    name: str
    flag: str
    kind: str
    help: str
    label: str
    hint: str = ""
    metavar: str | None = None
    #: a flow's own row: the config keys it replaces, the first whose table the config has wins
    keys: tuple[tuple[str, ...], ...] = ()

    def argparse_kwargs(self) -> dict[str, Any]:
        """What ``add_argument`` takes for this row's flag (values stay text where the model checks them)."""
        if self.kind == "bool":
            return {"dest": self.name, "action": argparse.BooleanOptionalAction, "default": None, "help": self.help}
        kwargs: dict[str, Any] = {"dest": self.name, "default": None, "help": self.help}
        if self.kind == "int":
            kwargs["type"] = count_argument
        if self.metavar:
            kwargs["metavar"] = self.metavar
        return kwargs

    def field(self) -> dict[str, str]:
        """The wizard's field: name, label, input type and hint (``path`` and ``seeds`` are text inputs)."""
        kind = self.kind if self.kind in ("int", "bool", "url") else "text"
        return {"name": self.name, "label": self.label, "type": kind, "hint": self.hint}

    def parse(self, value: Any) -> Any:
        """A flag or field value as this row's type; a ``ValueError`` says what is wrong."""
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("true", "1", "yes", "on"):
                return True
            if text in ("false", "0", "no", "off"):
                return False
            raise ValueError("expected true or false")
        if self.kind == "int":
            return value if isinstance(value, int) and 1 <= value <= MAX_COUNT else whole_number(value)
        if self.kind == "seeds":
            return list(value) if isinstance(value, list) else parse_seeds(str(value))
        return value


#: the overrides every flow is asked about (``--backend`` is resolved on its own)
CORE_ROWS: tuple[OverrideRow, ...] = (
    OverrideRow("model", "--model", "text", "Override the model (RL: the model to train; SFT: base model).",
                "Model", "Base model (RL/SFT)"),
    OverrideRow("dataset", "--dataset", "path", "SFT training JSONL (replaces [job].data).",
                "Dataset (SFT JSONL)", "Path relative to the notebook", metavar="PATH"),
    OverrideRow("examples", "--examples", "int", "SFT: upload only the first N examples.",
                "Examples (SFT)", "Upload only the first N examples", metavar="N"),
    OverrideRow("task_url", "--task-url", "url", "Task app URL (RL and prompt learning).",
                "Task app URL", "http(s)://… (RL, prompt learning)", metavar="URL"),
    OverrideRow("idempotency", "--idempotency", "text",
                "Idempotency-Key for job creation (default: a fresh key per submission).",
                "Idempotency key", "Blank: a fresh key per submit", metavar="KEY"),
    OverrideRow("allow_experimental", "--allow-experimental", "bool", "Allow experimental base models.",
                "Allow experimental models"),
)
