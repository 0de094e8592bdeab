"""Overrides: validation errors name the flag; ignored overrides become warnings; conflicts raise."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from synth_nb.errors import OverrideError
from synth_nb.flows import get_flow
from synth_nb.flows.overrides import Overrides, check_multi_config
from synth_nb.pipeline.flags import build_train_parser


@pytest.mark.parametrize(("values", "flag"), [
    ({"examples": 0}, "--examples"),
    ({"examples": -3}, "--examples"),
    ({"task_url": "127.0.0.1:8102"}, "--task-url"),
    ({"backend": "localhost"}, "--backend"),
    ({"model": "   "}, "--model"),
    ({"idempotency": ""}, "--idempotency"),
])
def test_invalid_values_raise_override_error_naming_the_flag(values: dict[str, object], flag: str) -> None:
    with pytest.raises(OverrideError, match=flag):
        Overrides.build(**values)


def test_from_args_reads_the_shared_train_flags(tmp_path: Path) -> None:
    args = build_train_parser().parse_args(["--model", " Qwen/Qwen3-4B ", "--examples", "5", "--dataset",
                                            str(tmp_path / "d.jsonl"), "--backend", "local",
                                            "--no-allow-experimental"])
    overrides = Overrides.from_args(args)
    assert overrides.model == "Qwen/Qwen3-4B" and overrides.examples == 5
    assert overrides.dataset == tmp_path / "d.jsonl" and overrides.backend == "local"
    assert overrides.allow_experimental is False
    assert Overrides.from_args(argparse.Namespace()) == Overrides()


def test_ignored_overrides_are_reported_per_flow() -> None:
    overrides = Overrides(model="Qwen/Qwen3-4B", dataset=Path("d.jsonl"), examples=3, task_url="http://t")
    pl = overrides.ignored_by(get_flow("prompt_learning"))
    assert any(w.startswith("--model is ignored for prompt learning") for w in pl)
    assert any(w.startswith("--dataset is ignored") for w in pl)
    assert any(w.startswith("--examples is ignored") for w in pl)
    assert overrides.ignored_by(get_flow("sft")) == ["--task-url is ignored for SFT jobs: SFT does not use a task app"]
    assert {w.split()[0] for w in overrides.ignored_by(get_flow("rl"))} == {"--dataset", "--examples"}


def test_one_idempotency_key_cannot_serve_several_jobs() -> None:
    check_multi_config(Overrides(idempotency="k1"), ["rl"])
    check_multi_config(Overrides(), ["rl", "rl", "sft"])
    with pytest.raises(OverrideError, match="reused by 2 jobs"):
        check_multi_config(Overrides(idempotency="k1"), ["rl", "prompt_learning"])


SYNTH_KEY = "sk_synth_CANARY_overrides_0123456789"


@pytest.mark.parametrize("values", [
    {"task_url": SYNTH_KEY},
    {"backend": SYNTH_KEY},
    {"task_url": "http://exa mple.com"},
    {"backend": "http://"},
    {"task_url": "https://:80/x"},
    {"backend": "http://host:99999"},
])
def test_bad_urls_are_rejected_and_keys_are_masked(values: dict[str, object]) -> None:
    with pytest.raises(OverrideError) as info:
        Overrides.build(**values)
    assert SYNTH_KEY not in str(info.value)
    assert str(info.value).startswith("invalid override: --")


def test_a_value_equal_to_an_environment_secret_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    short = "plainwords"  # does not look like a key, but it is one
    monkeypatch.setenv("ENVIRONMENT_API_KEY", short)
    with pytest.raises(OverrideError) as info:
        Overrides.build(task_url=short)
    assert short not in str(info.value) and "••••" in str(info.value)


def test_repr_masks_a_key_given_as_an_override() -> None:
    overrides = Overrides.build(model=SYNTH_KEY, idempotency="k-1")
    assert SYNTH_KEY not in repr(overrides) and SYNTH_KEY not in str(overrides)
    assert overrides.model == SYNTH_KEY  # the value itself is kept (the flow decides what to do with it)


def test_an_idempotency_key_that_looks_like_a_secret_is_masked_in_the_conflict() -> None:
    with pytest.raises(OverrideError) as info:
        check_multi_config(Overrides.build(idempotency=SYNTH_KEY), ["sft", "rl"])
    assert SYNTH_KEY not in str(info.value)
