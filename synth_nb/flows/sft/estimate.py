"""What an SFT job will do, from its plan's uploads: rows and tokens of the training data, times epochs.

Tokens are what the trainer reports: every training example's tokens, chat template included, once per
epoch (validation is not counted). A hosted backend's tokenizer is not at hand, so they are approximated
as characters / 4; the embedded backend trains a model that is not on this machine with a byte tokenizer,
whose count is exact and is what the card shows when the target is that backend.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from synth_nb.flows.base import Workload
from synth_nb.plan import Plan

__all__ = ["CHARS_PER_TOKEN", "dataset_size", "embedded_tokens", "workload"]

CHARS_PER_TOKEN = 4
#: the embedded trainer's defaults: sequence length for its tiny model, and batch size
TINY_SEQUENCE_LENGTH = 256
DEFAULT_BATCH_SIZE = 16


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


def _int(value: Any, default: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def embedded_tokens(model: str | None, path: Path, hyperparameters: dict[str, Any],
                    limit: int | None = None) -> tuple[int | None, str]:
    """The training tokens the embedded backend's trainer will count, and how: its byte tokenizer over
    every example (chat template included, cut to ``sequence_length``) x epochs. ``None`` when it trains a
    model folder of this machine, whose tokenizer is not loaded here."""
    from synth_nb.local.errors import ChatDataError, UnknownLocalModel
    from synth_nb.local.training.chat_data import load_chat_jsonl
    from synth_nb.local.training.model_choice import choose_model
    from synth_nb.local.training.tokenizer import IGNORE_INDEX, ByteTokenizer, encode_chat

    try:
        if choose_model(model).kind != "tiny":
            return None, ""
        examples = load_chat_jsonl(path).examples
    except (ChatDataError, UnknownLocalModel):
        return None, ""
    examples = examples[:limit] if limit is not None else examples
    seq_len = _int(hyperparameters.get("sequence_length"), TINY_SEQUENCE_LENGTH) or TINY_SEQUENCE_LENGTH
    tokenizer, lengths = ByteTokenizer(), []
    for messages in examples:
        ids, labels = encode_chat(tokenizer, messages)
        if any(label != IGNORE_INDEX for label in labels[1:seq_len]):  # the trainer drops the others
            lengths.append(min(len(ids), seq_len))
    if not lengths:
        return None, ""
    per_epoch = sum(lengths)
    epochs = _int(hyperparameters.get("n_epochs"), 1) or 1
    how = (f"{per_epoch:,} tokens of {len(lengths)} examples x {epochs} epoch(s), counted with the byte "
           f"tokenizer of the tiny model the embedded backend trains in place of {model or 'the model'}")
    max_steps = _int(hyperparameters.get("max_steps"), None)
    if max_steps is None:
        return per_epoch * epochs, how
    batch = (_int(hyperparameters.get("batch_size"), DEFAULT_BATCH_SIZE) or DEFAULT_BATCH_SIZE) * (
        _int(hyperparameters.get("gradient_accumulation_steps"), 1) or 1)
    steps_per_epoch = math.ceil(len(lengths) / batch)
    return round(per_epoch * max_steps / steps_per_epoch), (
        f"{per_epoch:,} tokens per epoch of {steps_per_epoch} steps x max_steps {max_steps}, counted with the "
        f"byte tokenizer of the tiny model the embedded backend trains in place of {model or 'the model'}")


def workload(plan: Plan) -> Workload:
    """Training tokens x epochs, the base model, and the training and validation splits as facts."""
    uploads = {step.ref: step for step in plan.steps if step.kind == "upload" and step.upload is not None}
    body = plan.create_step.body if isinstance(plan.create_step.body, dict) else {}
    raw = body.get("hyperparameters")
    hyperparameters: dict[str, Any] = raw if isinstance(raw, dict) else {}
    epochs = int(hyperparameters.get("n_epochs") or 1)
    model = body.get("model") if isinstance(body.get("model"), str) else None
    facts: list[str] = []
    tokens = exact = None
    exact_how = ""
    train = uploads.get("training_file")
    if train is not None and train.upload is not None:
        limit = (train.body or {}).get("limit_lines")
        limit = int(limit) if limit is not None else None
        rows, tokens = dataset_size(train.upload, limit)
        facts.append(f"training data: {train.upload.name}, {rows:,} rows")  # its tokens: the estimate's one count
        exact, exact_how = embedded_tokens(model, train.upload, hyperparameters, limit)
    validation = uploads.get("validation_file")
    if validation is not None and validation.upload is not None:
        rows, _ = dataset_size(validation.upload)
        facts.append(f"validation split: {validation.upload.name}, {rows:,} rows (not trained on)")
    else:
        facts.append("validation split: none ([data].validation_path not set or not found)")
    return Workload(tokens=None if tokens is None else tokens * epochs,
                    formula=f"~{tokens or 0:,} tokens (characters / {CHARS_PER_TOKEN}) x {epochs} epoch(s); the "
                            "backend's tokenizer and chat template decide the real count", model=model,
                    facts=tuple(facts), embedded_tokens=exact, embedded_tokens_how=exact_how)
