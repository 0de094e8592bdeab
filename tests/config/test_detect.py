"""Flow detection uses exactly 0.2.24's deciding keys, in the same order."""

from __future__ import annotations

import pytest

from synth_nb.config import detect_flow


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"prompt_learning": {"algorithm": "gepa"}}, ("prompt_learning", "gepa")),
        ({"prompt_learning": {"algorithm": "MIPRO"}}, ("prompt_learning", "mipro")),
        ({"prompt_learning": {"algorithm": "adas"}}, ("prompt_learning", None)),
        ({"prompt_learning": "anything", "algorithm": {"type": "online"}}, ("prompt_learning", None)),
        ({"algorithm": {"type": "Online"}}, ("rl", None)),
        ({"algorithm": {"method": "gspo"}}, ("rl", None)),
        ({"rollout": {"x": 1}, "model": "Qwen/Qwen3-4B"}, ("rl", None)),
        ({"rollout": {"x": 1}, "policy": {"a": 1}}, ("rl", None)),
        ({"algorithm": {"type": "offline"}}, ("sft", None)),
        ({"algorithm": {"method": "supervised_finetune"}}, ("sft", None)),
        ({"job": {"model": "x"}, "compute": {"gpu_type": "H100"}}, ("sft", None)),
        ({"type": "rl", "model": {"base": "x"}}, (None, None)),
        ({"rollout": {}, "model": "x"}, (None, None)),
        ({"algorithm": "online"}, (None, None)),
        ({"algorithm": {"type": 3}}, (None, None)),
        ({}, (None, None)),
    ],
)
def test_deciding_keys(raw: dict, expected: tuple) -> None:
    assert detect_flow(raw) == expected


def test_rl_rule_wins_over_sft_rule() -> None:
    # [rollout] + model is checked before type == "offline", as in 0.2.24
    assert detect_flow({"algorithm": {"type": "offline"}, "rollout": {"a": 1}, "model": "m"}) == ("rl", None)


def test_non_mapping_is_not_a_config() -> None:
    assert detect_flow([1, 2]) == (None, None)  # type: ignore[arg-type]
