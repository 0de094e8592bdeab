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


#: event documents as a backend may send them: (type, level, message, the data's JSON text)
SENT = [
    ("rl.train.step", "info", "step 3", b'{"step":3,"reward_mean":0.5}'),
    ("rl.job.created", "info", "", b'{"note":"Modal container ready"}'),
    ("rl.job.created", "info", "", b'{"note":"mo\\u0064al container"}'),  # an escaped letter: only json.dumps shows it
    ("rl.job.created", "info", "", b'{"note":"modal","note":"gone"}'),  # a key sent twice keeps its last value
    ("rl.job.created", "info", "", b'{"modal_key":1}'),
    ("rl.job.created", "info", "", '{"note":"Ünïcode modal"}'.encode()),
    ("rl.job.created", "info", "", b'{"x":1e5,"flag":true,"none":null}'),
    ("rl.status", "info", "queued on HATCHET", b'{}'),
    ("rl.worker.alive", "info", "", b'{}'),
    ("modal.boot.failed", "info", "modal", b'{"error":"modal"}'),
    ("rl.train.step", "ERROR", "", b'{"hatchet":1}'),
    ("sft.pricing.check.requested", "info", "", b'{}'),
]


def test_the_noise_rule_read_from_an_event_document_agrees_with_the_event_s() -> None:
    """``is_noise_text`` (``--all-events`` reads a million documents without building the events) answers what
    ``is_noise`` answers of the event, or None (then the event is asked), whatever the document's spelling."""
    import json

    for flow in ("rl", "sft", "prompt_learning"):
        rule = get_flow(flow)
        for etype, level, message, data_json in SENT:
            event = Event(seq=1, type=etype, level=level, message=message, data=json.loads(data_json))
            said = rule.is_noise_text(etype, level, message, data_json)
            assert said is None or said == rule.is_noise(event), (flow, etype, data_json)
    rl = get_flow("rl")
    assert rl.is_noise_text("rl.train.step", "info", "step 3", b'{"step":3}') is False  # the common case is told
    # a chunk of documents with no noise word in its text: each of its events says False by the words
    documents = [json.dumps({"type": t, "level": v, "message": m})[:-1].encode() + b',"data":' + d + b"}"
                 for t, v, m, d in SENT]
    for (etype, _level, message, data_json), document in zip(SENT, documents, strict=True):
        if rl.noise_absent(document):
            assert rl.noise_in_text(etype, message, data_json) is False, document
    assert rl.noise_absent(documents[0]) and not rl.noise_absent(b",".join(documents))
    assert not rl.noise_absent(documents[2])  # an escape: the text cannot tell
    assert rl.is_noise_text("rl.job.created", "info", "", b'{"note":"mo\\u0064al"}') is None
