"""A GGUF model converted once into a plain model folder, so the model server starts in seconds.

``transformers serve`` loads ``<folder>:<file>.gguf`` itself, but reads the GGUF file's metadata in pure
Python four times over (config, tokenizer, weights): 25-50 s of CPU for SmolLM2-135M on every start, measured
on a 2-core machine, against 10-15 s for the same weights as safetensors. The first start therefore converts
the file with transformers' own GGUF loader (the weights dequantized to float32, exactly what the server would
hold in memory; the tokenizer and chat template from the file) and saves the result in a cache folder keyed by
the file's path, size, modification time and the transformers version; later starts serve that folder. The
conversion runs in a process of its own (``python -m synth_nb.local.gguf_folder``: it imports torch), and a
model it cannot convert is served from the GGUF file as before.

The cache is ``SYNTH_NB_MODEL_CACHE``, else ``$XDG_CACHE_HOME/synth-nb/models`` (``~/.cache/synth-nb/models``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import sys
from pathlib import Path

__all__ = ["cache_root", "converted_folder", "main"]

_DONE = "synth_nb_converted.txt"


def cache_root() -> Path:
    given = os.environ.get("SYNTH_NB_MODEL_CACHE", "").strip()
    if given:
        return Path(given).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "synth-nb" / "models"


def converted_folder(target: str) -> Path:
    """Where the conversion of ``<folder>:<file>.gguf`` lives (whether it exists yet or not)."""
    folder, _, file_name = target.rpartition(":")
    path = Path(folder) / file_name
    stat = path.stat()
    try:
        version = importlib.metadata.version("transformers")
    except importlib.metadata.PackageNotFoundError:
        version = "none"
    key = hashlib.sha256(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{version}".encode()).hexdigest()[:16]
    return cache_root() / f"{path.stem}-{key}"


def is_converted(folder: Path) -> bool:
    return (folder / _DONE).is_file()


def convert(target: str, out: Path) -> Path:
    """Load the GGUF file with transformers and save it as a model folder at ``out`` (atomically)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, _, file_name = target.rpartition(":")
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=file_name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=file_name, dtype=torch.float32)
    # the weights are plain float32 tensors once loaded; only the GGUF marker stops save_pretrained
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    staging = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(str(staging))
    tokenizer.save_pretrained(str(staging))
    (staging / _DONE).write_text(f"converted from {Path(folder) / file_name}\n", encoding="utf-8")
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(staging, out)
    except OSError:  # another process finished the same conversion first: keep that one
        shutil.rmtree(staging, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    target, out = (argv if argv is not None else sys.argv[1:])[:2]
    convert(target, Path(out))
    print(f"converted {target} -> {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
