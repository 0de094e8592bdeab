"""Which device a training worker uses: CUDA or Apple's MPS when present, else the CPU (imports torch).

bf16 is used where the device supports it (CUDA devices that report bf16 support); MPS and the CPU train in
float32. ``SYNTH_NB_DEVICE`` (``cpu``, ``cuda``, ``cuda:1``, ``mps``) forces a device, e.g. to keep a GPU free.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["Device", "choose_device"]


@dataclass(frozen=True)
class Device:
    name: str
    bf16: bool
    description: str

    @property
    def dtype(self) -> torch.dtype:
        return torch.bfloat16 if self.bf16 else torch.float32

    def describe(self) -> dict[str, Any]:
        return {"device": self.name, "dtype": "bfloat16" if self.bf16 else "float32", "device_name": self.description}


def _mps() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def choose_device(requested: str | None = None) -> Device:
    wanted = (requested or os.environ.get("SYNTH_NB_DEVICE") or "").strip().lower()
    if wanted == "cpu":
        return Device("cpu", False, "CPU (asked for)")
    if wanted.startswith("cuda") or (not wanted and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            raise ValueError(f"SYNTH_NB_DEVICE={wanted} but torch sees no CUDA device here")
        name = wanted or "cuda"
        index = torch.device(name).index or 0
        return Device(name, bool(torch.cuda.is_bf16_supported()), f"CUDA {torch.cuda.get_device_name(index)}")
    if wanted == "mps" or (not wanted and _mps()):
        if not _mps():
            raise ValueError("SYNTH_NB_DEVICE=mps but torch sees no MPS device here")
        return Device("mps", False, "Apple MPS")
    if wanted:
        raise ValueError(f"SYNTH_NB_DEVICE must be cpu, cuda, cuda:N or mps, got {wanted!r}")
    return Device("cpu", False, f"CPU ({torch.get_num_threads()} threads; no CUDA or MPS device)")
