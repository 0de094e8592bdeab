"""Which model a local job trains, decided without torch so the executor can reject bad paths at create time.

A config's model resolves, in this order, to the fine-tuned model of an earlier local job, a local Hugging Face
folder when it is a path to one, or the snapshot of a hub id (``Qwen/Qwen3-0.6B``) in the local Hugging Face
cache when the model is there (``hub_cache``: the cache is read, nothing is ever downloaded); anything else is
replaced by a tiny random-init GPT-2, and ``reason`` says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from synth_nb.local.errors import UnknownLocalModel
from synth_nb.local.hub_cache import cached_model_folder, hub_cache_dir, looks_like_hub_id

__all__ = ["ModelChoice", "artifact_model_dir", "choose_model", "looks_like_path"]

_FT_PREFIXES = ("ft:", "peft:", "fft:", "qft:", "rl:", "sft:")


@dataclass(frozen=True)
class ModelChoice:
    #: "local" (a folder on disk) or "tiny" (random-init GPT-2 with the byte tokenizer)
    kind: str
    requested: str
    path: Path | None
    reason: str
    #: where the model came from: "artifact" (an earlier local job), "folder", "hub-cache" or "tiny"
    source: str = "tiny"


def looks_like_path(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~", "file:")) or name.endswith(("/", os.sep))


def artifact_model_dir(name: str, roots: Iterable[Path]) -> Path | None:
    """``sft:<base>:<job_id>``-style ids of earlier local jobs map to ``<root>/<job_id>/model``."""
    if not name.startswith(_FT_PREFIXES):
        return None
    job_id = name.rsplit(":", 1)[-1]
    for root in roots:
        candidate = Path(root) / job_id / "model"
        if (candidate / "config.json").is_file() or (candidate / "adapter_config.json").is_file():
            return candidate
    return None


def _is_model_dir(path: Path) -> bool:
    return path.is_dir() and ((path / "config.json").is_file() or (path / "adapter_config.json").is_file())


def choose_model(name: str | None, *, artifact_roots: Iterable[Path] = ()) -> ModelChoice:
    """Decide what to train; raises UnknownLocalModel for a path that is not a model folder."""
    requested = (name or "").strip()
    if not requested:
        return ModelChoice("tiny", requested, None, "no model was given, so a tiny random-init GPT-2 with a byte "
                           "tokenizer stands in")
    from_job = artifact_model_dir(requested, artifact_roots)
    if from_job is not None:
        return ModelChoice("local", requested, from_job, f"{requested} is the artifact of an earlier local job",
                           "artifact")
    raw = requested[len("file:"):] if requested.startswith("file:") else requested
    path = Path(raw).expanduser()
    if _is_model_dir(path):
        return ModelChoice("local", requested, path.resolve(), f"{requested} is a model folder on disk", "folder")
    if looks_like_path(requested) or path.is_dir():
        why = "does not exist" if not path.exists() else "has no config.json or adapter_config.json"
        raise UnknownLocalModel(f"model {requested!r} looks like a local path but {why}; give a Hugging Face "
                                "model folder (config.json + weights) or a model id to train the tiny model")
    cached = cached_model_folder(requested) if looks_like_hub_id(requested) else None
    if cached is not None:
        return ModelChoice("local", requested, cached, f"{requested} is in the local Hugging Face cache ({cached})",
                           "hub-cache")
    return ModelChoice("tiny", requested, None,
                       f"{requested!r} is neither a model folder on this machine nor in the local Hugging Face "
                       f"cache ({hub_cache_dir()}), and the local backend never downloads weights, so a tiny "
                       "random-init GPT-2 with a byte tokenizer stands in")
