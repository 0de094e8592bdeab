"""Each flow module owns its noise rule; the CLI and the monitor panel both ask ``flows.is_noise``."""

from __future__ import annotations

from synth_nb.flows import is_noise
from synth_nb.records import Event


def ev(etype: str, message: str = "", level: str = "info", **data: object) -> Event:
    return Event(seq=1, type=etype, message=message, level=level, data=dict(data))


def test_each_flow_hides_what_0_2_24_hides() -> None:
    assert is_noise("sft", ev("sft.pricing.check.requested"))
    assert not is_noise("sft", ev("sft.training.started"))
    assert is_noise("prompt_learning", ev("mipro.tpe.update"))
    assert not is_noise("prompt_learning", ev("prompt.learning.trial.results"))
    assert is_noise("rl", ev("rl.status", "queued on Hatchet"))
    assert is_noise("rl", ev("rl.job.created", note="modal container ready"))
    assert not is_noise("rl", ev("rl.train.step", "step 3"))


def test_errors_are_never_hidden_and_heartbeats_always_are() -> None:
    assert not is_noise("rl", ev("modal.boot.failed"))
    assert not is_noise("sft", ev("sft.stage", level="error"))
    assert is_noise("rl", ev("rl.worker.alive")) and is_noise("sft", ev("sft.heartbeat"))


def test_unknown_flow_hides_nothing_but_heartbeats() -> None:
    assert not is_noise("dpo", ev("dpo.progress"))
