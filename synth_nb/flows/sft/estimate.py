"""What an SFT job will do, from its plan's uploads: rows and tokens of the training data, times epochs.

Tokens are approximated as characters / 4 (no tokenizer is downloaded to count them); the card says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from synth_nb.flows.base import Workload
from synth_nb.plan import Plan

__all__ = ["CHARS_PER_TOKEN", "dataset_size", "workload"]

CHARS_PER_TOKEN = 4


def _chars(value: Any) -> int:
    """Characters of every text in a message's content (a string or a list of text parts)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(_chars(part.get("text") if isinstance(part, dict) else part) for part in value)
    return 0


def dataset_size(path: Path, limit: int | None = None) -> tuple[int, int]:
    """``(rows, approximate tokens)`` of a chat JSONL, reading at most ``limit`` rows."""
    rows = chars = 0
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.strip():
                continue
            if limit is not None and rows >= limit:
                break
            rows += 1
            try:
                example = json.loads(line)
            except json.JSONDecodeError:
                continue
            messages = example.get("messages") if isinstance(example, dict) else None
            for message in messages if isinstance(messages, list) else []:
                if isinstance(message, dict):
                    chars += _chars(message.get("content"))
    return rows, chars // CHARS_PER_TOKEN


def workload(plan: Plan) -> Workload:
    """Training tokens x epochs, the base model, and the training and validation splits as facts."""
    uploads = {step.ref: step for step in plan.steps if step.kind == "upload" and step.upload is not None}
    body = plan.create_step.body if isinstance(plan.create_step.body, dict) else {}
    epochs = int((body.get("hyperparameters") or {}).get("n_epochs") or 1)
    facts: list[str] = []
    tokens = None
    train = uploads.get("training_file")
    if train is not None and train.upload is not None:
        limit = (train.body or {}).get("limit_lines")
        rows, tokens = dataset_size(train.upload, int(limit) if limit is not None else None)
        facts.append(f"training data: {train.upload.name}, {rows:,} rows, ~{tokens:,} tokens "
                     f"(characters / {CHARS_PER_TOKEN})")
    validation = uploads.get("validation_file")
    if validation is not None and validation.upload is not None:
        rows, val_tokens = dataset_size(validation.upload)
        facts.append(f"validation split: {validation.upload.name}, {rows:,} rows, ~{val_tokens:,} tokens")
    else:
        facts.append("validation split: none ([data].validation_path not set or not found)")
    model = body.get("model")
    return Workload(tokens=None if tokens is None else tokens * epochs,
                    formula=f"~{tokens or 0:,} tokens x {epochs} epoch(s)", model=model if isinstance(model, str) else None,
                    facts=tuple(facts))
