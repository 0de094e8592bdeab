"""The GRPO loop trains on the device the machine offers (or ``SYNTH_NB_DEVICE`` names), and on no other.

Without a GPU the loop's tensors are all on the CPU whatever the code says, so the last test watches how they
are made: every torch call made by the loop's own code, and every generator it makes, must name the chosen
device (a tensor or generator made without one lands on the CPU even when a GPU was chosen).
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors  # the constructors torch's own default-device mode fills

from synth_nb.local.errors import TrainingFailed
from synth_nb.local.executors.rl import RlExecutor
from synth_nb.local.training.device import choose_device, flow_devices
from synth_nb.local.training.grpo_loop import run_grpo

from .conftest import CANARY
from .fakes import FakeContext, LoopChannel, grpo_config
from .test_rl import _body

pytestmark = pytest.mark.torch

#: a device this machine does not have
ABSENT = "mps" if torch.cuda.is_available() else "cuda"


def _calling_module() -> tuple[str, str]:
    """The module (and file:line) of the nearest caller outside torch: whose code asked for the tensor."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("torch"):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return "", ""
    return frame.f_globals.get("__name__", ""), f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno}"


class _TensorDevices(TorchFunctionMode):
    """Records the torch calls made by synth-nb's own code: those that make a tensor on a device other than
    ``chosen``, and constructors called with no device (they make CPU tensors, whatever was chosen)."""

    def __init__(self, chosen: torch.device) -> None:
        super().__init__()
        self.chosen = chosen
        self.calls = 0
        self.implicit: list[str] = []
        self.elsewhere: list[str] = []

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        module, where = _calling_module()
        out = func(*args, **kwargs)
        if module.startswith("synth_nb."):
            self.calls += 1
            name = getattr(func, "__name__", str(func))
            if func in _device_constructors() and kwargs.get("device") is None:
                self.implicit.append(f"{where} {name}")
            made = out if isinstance(out, tuple | list) else [out]
            if any(isinstance(t, torch.Tensor) and t.device != self.chosen for t in made):
                self.elsewhere.append(f"{where} {name}")
        return out


class _RecordingGenerator(torch.Generator):
    """``torch.Generator`` that remembers which code made one and with which device."""

    made: list[tuple[str, str, Any]] = []

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        cls.made.append((*_calling_module(), kwargs.get("device", args[0] if args else None)))
        return super().__new__(cls, *args, **kwargs)


def test_every_tensor_and_generator_of_a_grpo_run_is_made_on_the_chosen_device(
        tmp_path: Any, policy_server: Any, charclass: str, monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = choose_device()  # this machine's own choice: the CPU without a GPU, the GPU where there is one
    loop = LoopChannel()
    body = _body(charclass, steps=1, batch=1, group=2, eval_seeds=(5,), every=0)
    ctx = FakeContext("rl", body, tmp_path, policy_server, environment_api_key=CANARY)
    cfg = grpo_config(body, ctx, policy_server, loop, CANARY)
    _RecordingGenerator.made = []
    monkeypatch.setattr(torch, "Generator", _RecordingGenerator)
    watch = _TensorDevices(chosen.torch_device)
    try:
        with watch:  # per thread: the loop samples and trains on this one; rollout threads only speak HTTP
            status = run_grpo(cfg, loop.channel)
    finally:
        loop.close()
    assert status == "succeeded", loop.events[-1]
    assert watch.calls > 50  # the loop's own torch calls were seen: sampling, log-probs, loss, optimiser step
    assert watch.implicit == []
    assert watch.elsewhere == []
    ours = [(where, device) for module, where, device in _RecordingGenerator.made if module.startswith("synth_nb.")]
    assert ours and all(device is not None and torch.device(device) == chosen.torch_device for _, device in ours)
    started = next(e["data"] for e in loop.events if e["type"] == "rl.train.started")
    assert (started["device"], started["dtype"]) == (chosen.name, "bfloat16" if chosen.bf16 else "float32")
    assert len(loop.series("train.loss")) == 1 and len(loop.series("eval.reward_mean")) == 2


def test_the_card_names_the_device_rl_trains_on_the_same_as_sft(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNTH_NB_DEVICE", "cpu")
    assert flow_devices()["rl"] == flow_devices()["sft"] == {"device": "cpu", "dtype": "float32",
                                                             "device_name": "CPU (asked for)"}
    monkeypatch.setenv("SYNTH_NB_DEVICE", ABSENT)
    said = flow_devices()
    assert said["rl"] == said["sft"] and said["rl"]["device"] is None  # the card: "device: none usable (…)"
    assert said["rl"]["device_name"].startswith(f"SYNTH_NB_DEVICE={ABSENT} but torch sees no")
    monkeypatch.setenv("SYNTH_NB_DEVICE", "cuda:x")  # a typo: the setting named, not torch's own words
    assert flow_devices()["rl"]["device_name"] == "SYNTH_NB_DEVICE must be cpu, cuda, cuda:N or mps, got 'cuda:x'"


def test_an_rl_job_asked_for_a_device_this_machine_lacks_fails_with_one_error_naming_it(
        tmp_path: Any, policy_server: Any, charclass: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNTH_NB_DEVICE", ABSENT)  # the worker inherits it
    ctx = FakeContext("rl", _body(charclass), tmp_path, policy_server, environment_api_key=CANARY)
    expected = f"SYNTH_NB_DEVICE={ABSENT} but torch sees no {'MPS' if ABSENT == 'mps' else 'CUDA'} device here"
    with pytest.raises(TrainingFailed, match=expected):
        RlExecutor().run(ctx)
    assert ctx.event_types() == ["rl.model.selected", "rl.worker.error"]  # failed before any training
    error = ctx.events[-1]
    assert error["level"] == "error" and error["message"] == f"Training worker failed: ValueError: {expected}"
    assert not (ctx.work_dir / "model").exists() and not (ctx.work_dir / "checkpoint").exists()
