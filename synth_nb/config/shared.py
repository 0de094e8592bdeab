"""Tables shared by the RL and SFT schemas (spec §3.1) and the building blocks of every schema.

Models keep unknown keys (``extra="allow"``) like 0.2.24 does, so ``model_dump(exclude_none=True)`` is
the dict 0.2.24 would send; the loader turns those extras into warnings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AlgorithmConfig",
    "ComputeConfig",
    "ExtraModel",
    "FreeTable",
    "LoraConfig",
    "NonNegFloat",
    "NonNegInt",
    "PolicyConfig",
    "PosFloat",
    "PosInt",
    "Problem",
    "TopologyConfig",
    "UnitFloat",
    "check_algorithm",
]

PosInt = Annotated[int, Field(gt=0)]
NonNegInt = Annotated[int, Field(ge=0)]
PosFloat = Annotated[float, Field(gt=0)]
NonNegFloat = Annotated[float, Field(ge=0)]
UnitFloat = Annotated[float, Field(ge=0, le=1)]
FreeTable = dict[str, Any]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a config: where (dotted key path), what, and how to fix it."""

    key: tuple[str | int, ...]
    message: str
    hint: str | None = None


class ExtraModel(BaseModel):
    """Base of every config table: unknown keys are kept (and reported as warnings)."""

    model_config = ConfigDict(extra="allow", protected_namespaces=(), validate_default=False)


class AlgorithmConfig(ExtraModel):
    """``[algorithm]``: all three keys are required whenever the table is present."""

    type: str
    method: str
    variety: str


class TopologyConfig(ExtraModel):
    """``[compute.topology]``: how GPUs are split between inference, training and reference."""

    type: str | None = None
    gpus_for_vllm: NonNegInt | None = None
    gpus_for_training: NonNegInt | None = None
    gpus_for_ref: NonNegInt | None = None
    tensor_parallel: PosInt | None = None
    reference_placement: Literal["none", "shared", "dedicated"] | None = None


class ComputeConfig(ExtraModel):
    """``[compute]``: the hardware to rent."""

    gpu_type: str
    gpu_count: PosInt
    nodes: PosInt | None = None
    topology: TopologyConfig | None = None


class LoraConfig(ExtraModel):
    """``[training.lora]``: adapter shape."""

    r: PosInt | None = None
    alpha: PosInt | None = None
    dropout: UnitFloat | None = None
    target_modules: list[str] | None = None


class PolicyConfig(ExtraModel):
    """``[policy]`` for RL and SFT (new format): exactly one of ``model_name`` / ``source``."""

    model_name: str | None = None
    source: str | None = None
    max_tokens: PosInt = 512
    temperature: NonNegFloat = 0.7
    top_p: Annotated[float, Field(gt=0, le=1)] = 0.95
    top_k: PosInt | None = None
    repetition_penalty: PosFloat = 1.0
    stop_sequences: list[str] | None = None
    trainer_mode: Literal["lora", "full", "qlora"]
    label: str
    inference_url: str | None = None


_ALGORITHM_COMBOS = {
    "rl": (("online", "policy_gradient", "gspo"),),
    "sft": (("offline", "sft", "fft"), ("offline", "supervised_finetune", "fft"), ("offline", "sft", "lora")),
}


def check_algorithm(algorithm: AlgorithmConfig, flow: Literal["rl", "sft"]) -> list[Problem]:
    """The (type, method, variety) combinations 0.2.24 accepts for ``flow``."""
    combos = _ALGORITHM_COMBOS[flow]
    expected_type = combos[0][0]
    if algorithm.type != expected_type:
        return [Problem(("algorithm", "type"), f"must be {expected_type!r} for {flow.upper()} (got {algorithm.type!r})",
                        f"set type = \"{expected_type}\" in [algorithm]")]
    triple = (algorithm.type, algorithm.method, algorithm.variety.lower())
    if triple in combos:
        return []
    allowed = "; ".join(f"method = \"{m}\", variety = \"{v}\"" for _, m, v in combos)
    methods = {m for _, m, _ in combos}
    key = "method" if algorithm.method not in methods else "variety"
    return [Problem(("algorithm", key),
                    f"unsupported combination type={algorithm.type!r}, method={algorithm.method!r}, "
                    f"variety={algorithm.variety!r}", f"supported for {flow.upper()}: {allowed}")]
