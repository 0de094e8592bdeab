"""Models a user already has: a hub id found in the local Hugging Face cache, never downloaded.

The embedded backend runs offline. A hub id such as ``Qwen/Qwen3-0.6B`` names a model this machine may
already hold in its Hugging Face cache (from an earlier ``from_pretrained`` or ``hf download``); this module
finds that snapshot folder with ``huggingface_hub.try_to_load_from_cache`` (which reads the cache only and
never reaches the network) and checks that its weights are there too. The cache folder is read from the
environment at each call (``HF_HUB_CACHE``, else ``HF_HOME``/hub, else ``~/.cache/huggingface/hub``), so a
process that changes ``HF_HOME`` sees the new cache.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cached_model_folder", "hub_cache_dir", "looks_like_hub_id", "weight_files"]

#: what makes a folder a loadable checkpoint: one of these next to config.json
_WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json",
            "adapter_model.safetensors", "adapter_model.bin")


def hub_cache_dir() -> Path:
    """The hub cache the Hugging Face libraries use with the current environment."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "huggingface" / "hub"


def looks_like_hub_id(name: str) -> bool:
    """``owner/name`` (or a bare ``name``) with no path syntax: what ``from_pretrained`` would look up on the hub."""
    if not name or name.startswith(("/", ".", "~")) or name.endswith("/") or "\\" in name or ":" in name:
        return False
    parts = name.split("/")
    return len(parts) <= 2 and all(p and not p.startswith(".") for p in parts)


def weight_files(folder: Path) -> list[str]:
    return [name for name in _WEIGHTS if (folder / name).is_file()]


def cached_model_folder(repo_id: str) -> Path | None:
    """The cached snapshot folder of ``repo_id`` when its config and weights are there, else None.

    Nothing is downloaded: without ``huggingface_hub`` (it comes with transformers and tokenizers) or
    without a cached ``config.json`` the answer is None.
    """
    if not looks_like_hub_id(repo_id):
        return None
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache(repo_id, "config.json", cache_dir=hub_cache_dir())
    if not isinstance(found, str):  # None (never cached) or the "known not to exist" marker
        return None
    folder = Path(found).parent
    return folder if weight_files(folder) else None
