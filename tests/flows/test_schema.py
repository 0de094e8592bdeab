"""Shared tables: algorithm combinations, compute, policy defaults."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from synth_nb.flows import get_flow
from synth_nb.flows.schema import AlgorithmConfig, ComputeConfig, PolicyConfig, check_algorithm


@pytest.mark.parametrize(
    ("triple", "flow", "ok"),
    [
        (("online", "policy_gradient", "gspo"), "rl", True),
        (("online", "policy_gradient", "GSPO"), "rl", True),
        (("online", "ppo", "gspo"), "rl", False),
        (("offline", "sft", "fft"), "sft", True),
        (("offline", "supervised_finetune", "fft"), "sft", True),
        (("offline", "sft", "lora"), "sft", True),
        (("offline", "sft", "qlora"), "sft", False),
        (("Offline", "sft", "fft"), "sft", False),
    ],
)
def test_algorithm_combinations(triple: tuple[str, str, str], flow: str, ok: bool) -> None:
    algo = AlgorithmConfig(type=triple[0], method=triple[1], variety=triple[2])
    problems = check_algorithm(algo, get_flow(flow).algorithm_triples, get_flow(flow).label)
    assert (not problems) is ok
    for problem in problems:
        assert problem.key[0] == "algorithm" and problem.hint


def test_compute_requires_a_positive_gpu_count() -> None:
    with pytest.raises(ValidationError):
        ComputeConfig(gpu_type="H100", gpu_count=0)
    assert ComputeConfig(gpu_type="H100", gpu_count=1).topology is None


def test_policy_defaults_match_0_2_24() -> None:
    policy = PolicyConfig(source="rl:Qwen/Qwen3-4B:job", trainer_mode="lora", label="x")
    dumped = policy.model_dump(exclude_none=True)
    assert dumped == {"source": "rl:Qwen/Qwen3-4B:job", "max_tokens": 512, "temperature": 0.7, "top_p": 0.95,
                      "repetition_penalty": 1.0, "trainer_mode": "lora", "label": "x"}
