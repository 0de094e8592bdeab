"""Which device a training worker uses: CUDA or Apple's MPS when present, else the CPU (imports torch).

bf16 is used where the device supports it (CUDA devices that report bf16 support); MPS and the CPU train in
float32. ``SYNTH_NB_DEVICE`` (``cpu``, ``cuda``, ``cuda:1``, ``mps``) forces a device, e.g. to keep a GPU free; one
this machine does not have fails the job with one error naming it. SFT (its own loop and TRL) and RL (the GRPO
loop) choose the same way, so each flow trains on the device ``choose_device`` returns.

``python -m synth_nb.local.training.device`` prints, as one JSON line, the device each training flow's worker
would use here: the backend asks it once (``device_probe``) for the pre-flight card, so that the backend process
itself never imports torch.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["Device", "choose_device", "flow_devices"]

_NONE_FOUND = "no CUDA or MPS device"


@dataclass(frozen=True)
class Device:
    name: str
    bf16: bool
    description: str

    @property
    def dtype(self) -> torch.dtype:
        return torch.bfloat16 if self.bf16 else torch.float32

    @property
    def torch_device(self) -> torch.device:
        return torch.device(self.name)

    def autocast(self) -> contextlib.AbstractContextManager[Any]:
        """bf16 autocast where the device supports it (weights stay float32); nothing otherwise."""
        if not self.bf16:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.torch_device.type, dtype=torch.bfloat16)

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
        name = wanted or "cuda"
        try:
            index = torch.device(name).index or 0
        except RuntimeError:  # "cuda:x", "cudax": torch's own words say nothing of the setting
            raise ValueError(f"SYNTH_NB_DEVICE must be cpu, cuda, cuda:N or mps, got {wanted!r}") from None
        if not torch.cuda.is_available():
            raise ValueError(f"SYNTH_NB_DEVICE={wanted} but torch sees no CUDA device here")
        if index >= torch.cuda.device_count():
            raise ValueError(f"SYNTH_NB_DEVICE={wanted} but torch sees only {torch.cuda.device_count()} CUDA "
                             "device(s) here (cuda:0 is the first)")
        return Device(name, bool(torch.cuda.is_bf16_supported()), f"CUDA {torch.cuda.get_device_name(index)}")
    if wanted == "mps" or (not wanted and _mps()):
        if not _mps():
            raise ValueError("SYNTH_NB_DEVICE=mps but torch sees no MPS device here")
        return Device("mps", False, "Apple MPS")
    if wanted:
        raise ValueError(f"SYNTH_NB_DEVICE must be cpu, cuda, cuda:N or mps, got {wanted!r}")
    threads = torch.get_num_threads()
    return Device("cpu", False, f"CPU ({threads} thread{'' if threads == 1 else 's'}; {_NONE_FOUND})")


def flow_devices() -> dict[str, dict[str, Any]]:
    """Per training flow (the contract's flow names), the device its worker uses on this machine: the same
    choice for SFT and RL."""
    try:
        found: dict[str, Any] = choose_device().describe()
        if found["device"] == "cpu" and found["device_name"].endswith(_NONE_FOUND + ")"):  # threads: the job's own
            found["device_name"] = f"CPU ({_NONE_FOUND})"
    except ValueError as exc:  # a SYNTH_NB_DEVICE this machine cannot honour: the job would fail so
        found = {"device": None, "dtype": None, "device_name": str(exc)}
    return {"sft": found, "rl": dict(found)}


if __name__ == "__main__":
    print(json.dumps(flow_devices()))
