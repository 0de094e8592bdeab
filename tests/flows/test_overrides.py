"""Overrides: validation errors name the flag; ignored overrides become warnings; conflicts raise."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from synth_nb.cli.args import build_train_parser
from synth_nb.errors import OverrideError
from synth_nb.flows.overrides import Overrides, check_multi_config


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
    pl = overrides.ignored_by("prompt_learning")
    assert any(w.startswith("--model is ignored for prompt learning") for w in pl)
    assert any(w.startswith("--dataset is ignored") for w in pl)
    assert any(w.startswith("--examples is ignored") for w in pl)
    assert overrides.ignored_by("sft") == ["--task-url is ignored for sft jobs: SFT does not use a task app"]
    assert {w.split()[0] for w in overrides.ignored_by("rl")} == {"--dataset", "--examples"}


def test_one_idempotency_key_cannot_serve_several_jobs() -> None:
    check_multi_config(Overrides(idempotency="k1"), ["rl"])
    check_multi_config(Overrides(), ["rl", "rl", "sft"])
    with pytest.raises(OverrideError, match="reused by 2 jobs"):
        check_multi_config(Overrides(idempotency="k1"), ["rl", "prompt_learning"])
