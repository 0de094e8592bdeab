"""The bundled banking-intent dataset (``data.json``, written for synth-nb) and the prompts rendered from it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["DATA_PATH", "SYSTEM_PROMPT", "TOOL_NAME", "USER_PATTERN", "Example", "BankingDataset", "load_dataset"]

DATA_PATH = Path(__file__).with_name("data.json")
TOOL_NAME = "banking_classify"
SYSTEM_PROMPT = (
    "You are an expert banking assistant that classifies customer queries into banking intents. "
    f"Given a customer message, respond with exactly one intent label from the provided list using the "
    f"`{TOOL_NAME}` tool."
)
USER_PATTERN = (
    "Customer Query: {query}\n\nAvailable Intents:\n{available_intents}\n\n"
    "Classify this query into one of the above banking intents using the tool call."
)


@dataclass(frozen=True)
class Example:
    query: str
    intent: str


@dataclass(frozen=True)
class BankingDataset:
    name: str
    intents: tuple[str, ...]
    splits: dict[str, tuple[Example, ...]]

    def example(self, split: str, seed: int) -> Example:
        """Seeds index the split and wrap around, so any non-negative seed names an instance."""
        rows = self.splits[split]
        return rows[seed % len(rows)]

    @property
    def available_intents(self) -> str:
        return "\n".join(f"- {label}" for label in self.intents)

    def render_messages(self, query: str) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": USER_PATTERN.format(query=query, available_intents=self.available_intents)},
        ]


@lru_cache(maxsize=4)
def load_dataset(path: Path = DATA_PATH) -> BankingDataset:
    raw = json.loads(path.read_text(encoding="utf-8"))
    splits = {
        name: tuple(Example(query=row["query"], intent=row["intent"]) for row in rows)
        for name, rows in raw["splits"].items()
    }
    return BankingDataset(name=raw["name"], intents=tuple(raw["intents"]), splits=splits)
