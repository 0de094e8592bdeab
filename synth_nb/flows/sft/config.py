"""SFT config schema: ``[algorithm]``, ``[job]``, ``[compute]``, ``[data]``, ``[training]``
(+ ``validation``, ``lora``), ``[hyperparameters]`` (+ ``parallelism``) and free tables."""

from __future__ import annotations

from pydantic import Field

from synth_nb.flows import catalogue
from synth_nb.flows.schema import (
    AlgorithmConfig,
    ComputeConfig,
    EpochCount,
    ExtraModel,
    FreeTable,
    LoraConfig,
    NonNegFloat,
    NonNegInt,
    PosFloat,
    PosInt,
    Problem,
    UnitFloat,
    check_algorithm,
    check_compute,
    warning,
)
from synth_nb.secrets.redact import shown

__all__ = ["ALGORITHM_TRIPLES", "SftConfig", "check_sft"]

#: the ``[algorithm]`` (type, method, variety) combinations 0.2.24 accepts for SFT
ALGORITHM_TRIPLES = (("offline", "sft", "fft"), ("offline", "supervised_finetune", "fft"), ("offline", "sft", "lora"))


class JobConfig(ExtraModel):
    """``[job]``: ``data``/``data_path`` may be omitted when ``--dataset`` supplies the file."""

    model: str
    data: str | None = None
    data_path: str | None = None
    poll_seconds: PosInt | None = None


class SftDataConfig(ExtraModel):
    topology: FreeTable | None = None
    validation_path: str | None = None


class TrainingValidationConfig(ExtraModel):
    enabled: bool = True
    evaluation_strategy: str = "steps"
    eval_steps: NonNegInt = 0
    save_best_model_at_end: bool = True
    metric_for_best_model: str = "val.loss"
    greater_is_better: bool = False


class SftTrainingConfig(ExtraModel):
    mode: str | None = None
    use_qlora: bool | None = None
    lora: LoraConfig | None = None
    validation: TrainingValidationConfig | None = None


class ParallelismConfig(ExtraModel):
    use_deepspeed: bool | None = None
    deepspeed_stage: NonNegInt | None = None
    fsdp: bool | None = None
    bf16: bool | None = None
    fp16: bool | None = None
    activation_checkpointing: bool | None = None
    tensor_parallel_size: PosInt | None = None
    pipeline_parallel_size: PosInt | None = None


class HyperparametersConfig(ExtraModel):
    n_epochs: EpochCount = 1
    batch_size: PosInt | None = None
    global_batch: PosInt | None = None
    per_device_batch: PosInt | None = None
    gradient_accumulation_steps: PosInt | None = None
    sequence_length: PosInt | None = None
    learning_rate: PosFloat | None = None
    warmup_ratio: UnitFloat | None = None
    train_kind: str | None = None
    weight_decay: NonNegFloat | None = Field(default=None, description="accepted, not sent (as in 0.2.24)")
    parallelism: ParallelismConfig | None = None


class SftConfig(ExtraModel):
    """A whole SFT TOML file."""

    algorithm: AlgorithmConfig
    job: JobConfig
    compute: ComputeConfig
    data: SftDataConfig | None = None
    training: SftTrainingConfig | None = None
    hyperparameters: HyperparametersConfig | None = None
    policy: FreeTable | None = None
    lora: FreeTable | None = None
    tags: FreeTable | None = None

    @property
    def dataset(self) -> str | None:
        """The training JSONL named in the file (``[job].data`` else ``[job].data_path``), if any."""
        return self.job.data or self.job.data_path or None


def check_sft(cfg: SftConfig) -> list[Problem]:
    """Cross-field rules (errors and warnings)."""
    problems = check_algorithm(cfg.algorithm, ALGORITHM_TRIPLES, "SFT") + check_compute(cfg.compute)
    model = cfg.job.model.strip()
    if catalogue.canonical_model(model) is None:
        hint = "use a base model id such as \"Qwen/Qwen3-4B\" (see synth_nb.flows.catalogue.SFT_MODELS)"
        if catalogue.base_model_of(model) is not None:
            hint = "SFT starts from a base model; fine-tuned ids (ft:/rl:...) are not accepted here"
        problems.append(Problem(("job", "model"), f"model {shown(model)} is not a supported SFT base model", hint))
    if cfg.dataset is None:
        problems.append(warning("no [job].data: pass --dataset PATH (or set [job].data) before submitting"))
    if cfg.job.data and cfg.job.data_path and cfg.job.data != cfg.job.data_path:
        problems.append(warning("both [job].data and [job].data_path are set: [job].data is used"))
    return problems
