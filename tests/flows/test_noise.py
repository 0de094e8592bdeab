"""Each flow owns its noise rule on top of the generic one; the CLI and the monitor panel ask the flow."""

from __future__ import annotations

from synth_nb.flows import get_flow
from synth_nb.records import Event


def ev(etype: str, message: str = "", level: str = "info", **data: object) -> Event:
    return Event(seq=1, type=etype, message=message, level=level, data=dict(data))


def test_each_flow_hides_what_0_2_24_hides() -> None:
    assert get_flow("sft").is_noise(ev("sft.pricing.check.requested"))
    assert not get_flow("sft").is_noise(ev("sft.training.started"))
    assert get_flow("prompt_learning").is_noise(ev("mipro.tpe.update"))
    assert not get_flow("prompt_learning").is_noise(ev("prompt.learning.trial.results"))
    assert get_flow("rl").is_noise(ev("rl.status", "queued on Hatchet"))
    assert get_flow("rl").is_noise(ev("rl.job.created", note="modal container ready"))
    assert not get_flow("rl").is_noise(ev("rl.train.step", "step 3"))


def test_errors_are_never_hidden_and_heartbeats_always_are() -> None:
    assert not get_flow("rl").is_noise(ev("modal.boot.failed"))
    assert not get_flow("sft").is_noise(ev("sft.stage", level="error"))
    assert get_flow("rl").is_noise(ev("rl.worker.alive")) and get_flow("sft").is_noise(ev("sft.heartbeat"))


def test_errors_are_recognised_by_the_event_itself() -> None:
    assert ev("x.failed").is_error and ev("x", level="ERROR").is_error
    assert not ev("x.started", "failed to start? no").is_error
