"""Tables shared by the RL and SFT schemas and the building blocks of every flow's schema.

Models keep unknown keys (``extra="allow"``) like 0.2.24 does; the loader turns those extras into
warnings. Validation is strict: plans send the values as written in the TOML, so a value that pydantic
would have to convert (``"64"`` for a number, ``true`` for an integer) is an error rather than something
sent in a form the backend does not expect, and ``inf`` / ``nan`` are rejected (JSON cannot carry them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from synth_nb.flows import catalogue
from synth_nb.secrets.redact import redact_value, shown

__all__ = [
    "AlgorithmConfig",
    "ComputeConfig",
    "EpochCount",
    "ExtraModel",
    "FreeTable",
    "LoraConfig",
    "NonBlankStr",
    "NonNegFloat",
    "NonNegInt",
    "PolicyConfig",
    "PosFloat",
    "PosInt",
    "Problem",
    "Seed",
    "TopologyConfig",
    "UnitFloat",
    "algorithm_is",
    "check_algorithm",
    "check_compute",
    "warning",
]

PosInt = Annotated[int, Field(gt=0)]
NonNegInt = Annotated[int, Field(ge=0)]
PosFloat = Annotated[float, Field(gt=0)]
NonNegFloat = Annotated[float, Field(ge=0)]
UnitFloat = Annotated[float, Field(ge=0, le=1)]
#: a seed is a task-instance index the task app receives: a non-negative 64-bit integer
Seed = Annotated[int, Field(ge=0, le=2**63 - 1)]
FreeTable = dict[str, Any]
#: a training run of more epochs than this is a typo (10**12 would never end)
EpochCount = Annotated[int, Field(gt=0, le=1000)]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


#: a name or path that must say something (``results_folder = ""`` is a mistake, not "the default")
NonBlankStr = Annotated[str, AfterValidator(_not_blank)]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a config: where (dotted key path), what, and how to fix it."""

    key: tuple[str | int, ...]
    message: str
    hint: str | None = None
    #: a warning is reported but does not make the config invalid
    warning: bool = False


def warning(message: str) -> Problem:
    """A config-wide note that does not make the config invalid."""
    return Problem((), message, warning=True)


class ExtraModel(BaseModel):
    """Base of every config table: unknown keys are kept (and reported as warnings)."""

    model_config = ConfigDict(extra="allow", protected_namespaces=(), validate_default=False, strict=True,
                              allow_inf_nan=False)

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """Secret-looking values (``api_key = ...`` in any table, key-shaped strings) are masked."""
        for name, value in super().__repr_args__():
            yield name, redact_value(name, value)


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


def check_compute(compute: ComputeConfig) -> list[Problem]:
    """``[compute].gpu_type`` must be a GPU type the backend rents (case-insensitive)."""
    if catalogue.canonical_gpu_type(compute.gpu_type) is not None:
        return []
    return [Problem(("compute", "gpu_type"), f"unknown GPU type {shown(compute.gpu_type)}",
                    f"use one of {', '.join(catalogue.GPU_TYPES)}")]


def algorithm_is(raw: Mapping[str, Any], type_: str, methods: frozenset[str]) -> bool:
    """True when a parsed TOML's ``[algorithm]`` says ``type = type_`` or a method in ``methods`` (any case):
    how a flow claims a config by its algorithm table."""
    table = raw.get("algorithm")
    if not isinstance(table, Mapping):
        return False
    kind, method = table.get("type"), table.get("method")
    if isinstance(kind, str) and kind.lower() == type_:
        return True
    return isinstance(method, str) and method.lower() in methods


def check_algorithm(algorithm: AlgorithmConfig, triples: tuple[tuple[str, str, str], ...],
                    label: str) -> list[Problem]:
    """The accepted (type, method, variety) combinations of a flow (``label`` names it in messages)."""
    expected_type = triples[0][0]
    if algorithm.type != expected_type:
        return [Problem(("algorithm", "type"), f"must be {expected_type!r} for {label} (got {algorithm.type!r})",
                        f"set type = \"{expected_type}\" in [algorithm]")]
    triple = (algorithm.type, algorithm.method, algorithm.variety.lower())
    if triple in triples:
        return []
    allowed = "; ".join(f"method = \"{m}\", variety = \"{v}\"" for _, m, v in triples)
    methods = {m for _, m, _ in triples}
    key = "method" if algorithm.method not in methods else "variety"
    return [Problem(("algorithm", key),
                    f"unsupported combination type={algorithm.type!r}, method={algorithm.method!r}, "
                    f"variety={algorithm.variety!r}", f"supported for {label}: {allowed}")]
