"""RL config schema: ``[algorithm]``, ``[services]``, ``[model]``/``[policy]``, ``[compute]``,
topology, ``[rollout]``, ``[evaluation]``, ``[training]``, ``[judge]``, ``[rubric]`` and free tables."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from synth_nb.backend import url_problem
from synth_nb.errors import ConfigError
from synth_nb.flows import catalogue
from synth_nb.flows.schema import (
    AlgorithmConfig,
    ComputeConfig,
    ExtraModel,
    FreeTable,
    LoraConfig,
    NonNegFloat,
    PolicyConfig,
    PosFloat,
    PosInt,
    Problem,
    Seed,
    TopologyConfig,
    check_algorithm,
    check_compute,
    warning,
)
from synth_nb.secrets.redact import shown

__all__ = ["ALGORITHM_TRIPLES", "RlConfig", "check_rl", "resolve_rl_model"]

#: the ``[algorithm]`` (type, method, variety) combinations 0.2.24 accepts for RL
ALGORITHM_TRIPLES = (("online", "policy_gradient", "gspo"),)


class ServicesConfig(ExtraModel):
    task_url: str
    judge_url: str | None = None


class ModelConfig(ExtraModel):
    """Legacy ``[model]`` table: the one 0.2.24's builder reads (``base`` or ``source``)."""

    source: str | None = None
    base: str | None = None
    trainer_mode: Literal["lora", "full", "qlora"]
    label: str


class RolloutConfig(ExtraModel):
    env_name: str
    policy_name: str
    max_turns: PosInt
    episodes_per_batch: PosInt
    max_concurrent_rollouts: PosInt
    env_config: FreeTable | None = None
    policy_config: FreeTable | None = None
    batches_per_step: PosInt | None = None
    ops: list[str] | None = None


class EvaluationConfig(ExtraModel):
    instances: PosInt
    every_n_iters: PosInt
    seeds: list[Seed]


class RewardsConfig(ExtraModel):
    step_rewards_enabled: bool | None = None
    step_rewards_mode: str | None = None
    step_rewards_indicator_lambda: float | None = None
    step_rewards_beta: float | None = None
    step_rewards_strategy: str | None = None
    event_rewards_kind: str | None = None


class WeightSyncConfig(ExtraModel):
    enable: bool | None = None
    targets: list[str] | None = None
    mode: str | None = None
    direct: bool | None = None
    verify_every_k: Annotated[int, Field(ge=0)] | None = None  # 0 = never (0.2.24 examples use 0)


class TrainingConfig(RewardsConfig):
    """``[training]``: the six flat reward fields are deprecated aliases of ``[training.rewards]``."""

    num_epochs: PosInt
    iterations_per_epoch: PosInt
    max_turns: PosInt
    batch_size: PosInt
    group_size: PosInt
    learning_rate: PosFloat
    gradient_accumulation_steps: PosInt | None = None
    max_accumulated_minibatch: PosInt | None = None
    log_interval: PosInt | None = None
    weight_sync_interval: PosInt | None = None
    weight_sync: WeightSyncConfig | None = None
    lora: LoraConfig | None = None
    rewards: RewardsConfig | None = None
    #: read by the embedded backend's GRPO trainer (penalty towards the starting model; ``kl_coef`` is the
    #: same); not in 0.2.24's schema, so sent as written to a hosted backend
    kl_beta: NonNegFloat | None = None
    kl_coef: NonNegFloat | None = None


class JudgeOptions(ExtraModel):
    provider: Annotated[str, Field(pattern=r"^(openai|groq|gemini)$")]
    model: Annotated[str, Field(min_length=1)]
    rubric_id: str | None = None
    event: bool | None = None
    outcome: bool | None = None
    timeout_s: PosFloat | None = None
    metadata: FreeTable | None = None
    rubric_overrides: FreeTable | None = None
    max_concurrency: int | None = None  # deprecated, ignored
    tracks: list[str] | None = None  # deprecated, ignored


class JudgeRubric(ExtraModel):
    enabled: bool = False
    reward_blend: dict[str, float] | None = None


class JudgeConfig(ExtraModel):
    type: str | None = None
    timeout_s: PosInt | None = None
    enabled: bool | None = None
    reward_blend: dict[str, float] | None = None
    rubric: JudgeRubric | None = None
    options: JudgeOptions | None = None


class RubricWeights(ExtraModel):
    env: NonNegFloat | None = None
    event: NonNegFloat | None = None
    outcome: NonNegFloat | None = None


class RubricConfig(ExtraModel):
    enabled: bool | None = None
    weights: RubricWeights | None = None


class RlConfig(ExtraModel):
    """A whole RL TOML file."""

    algorithm: AlgorithmConfig
    services: ServicesConfig | None = None
    model: ModelConfig | None = None
    policy: PolicyConfig | None = None
    compute: ComputeConfig
    topology: TopologyConfig | None = None
    rollout: RolloutConfig
    evaluation: EvaluationConfig | None = None
    training: TrainingConfig | None = None
    judge: JudgeConfig | None = None
    rubric: RubricConfig | None = None
    vllm: FreeTable | None = None
    reference: FreeTable | None = None
    lora: FreeTable | None = None
    tags: FreeTable | None = None
    data: FreeTable | None = None
    smoke: FreeTable | None = None


def check_rl(cfg: RlConfig) -> list[Problem]:
    """Cross-field rules of 0.2.24's two RL validation stages (errors and warnings)."""
    problems = check_algorithm(cfg.algorithm, ALGORITHM_TRIPLES, "RL") + check_compute(cfg.compute)
    if cfg.policy is None and cfg.model is None:
        problems.append(Problem((), "[policy] or [model] section is required",
                                "add [model] with base = \"Qwen/Qwen3-4B\", trainer_mode and label"))
    if cfg.policy is not None and bool(cfg.policy.model_name) == bool(cfg.policy.source):
        problems.append(Problem(("policy",), "set exactly one of [policy].model_name or [policy].source",
                                "model_name for a base model (e.g. \"Qwen/Qwen3-4B\"), source for a fine-tuned id"))
    if cfg.model is not None:
        if cfg.model.base and cfg.model.source:
            problems.append(Problem(("model",), "set exactly one of [model].base or [model].source, not both",
                                    "base for a base model, source for a fine-tuned model id"))
        for field in ("base", "source"):
            value = getattr(cfg.model, field)
            if value:
                problems.extend(_model_id_problems(("model", field), value, base_only=field == "base"))
        if not cfg.model.base and not cfg.model.source:
            problems.append(warning("[model] has neither base nor source: pass --model, or set [model].base"))
    elif cfg.policy is not None:
        problems.append(warning("no [model] table: the model to train is taken from [policy] "
                                "(synth-ai 0.2.24 required [model] or --model)"))
    if cfg.topology is None and (cfg.compute.topology is None):
        problems.append(Problem(("topology",), "[topology] or [compute.topology] is required",
                                "add [topology] with gpus_for_vllm / gpus_for_training / gpus_for_ref"))
    if cfg.services is None:
        problems.append(warning("no [services].task_url: pass --task-url or set TASK_APP_URL before submitting"))
    elif url_problem(cfg.services.task_url):
        problems.append(Problem(("services", "task_url"), f"the task app URL {url_problem(cfg.services.task_url)}",
                                "set it to your task app's base URL"))
    problems.extend(_judge_problems(cfg))
    if cfg.rubric is not None and cfg.rubric.enabled and cfg.judge is None:
        problems.append(warning("[rubric].enabled is set but there is no [judge]: the rubric is treated as "
                                "disabled"))
    return problems


def _model_id_problems(key: tuple[str | int, ...], value: str, *, base_only: bool) -> list[Problem]:
    base = catalogue.canonical_model(value) if base_only else catalogue.base_model_of(value)
    if base is None:
        kind = "a supported base model id" if base_only else "a supported base model or fine-tuned id"
        return [Problem(key, f"model {shown(value)} is not {kind}",
                        "use e.g. \"Qwen/Qwen3-4B\" (see synth_nb.flows.catalogue.RL_MODELS)"
                        + ("" if base_only else " or an id like \"rl:Qwen/Qwen3-4B:job123\""))]
    if not catalogue.is_rl_capable(base):
        return [Problem(key, f"model {base!r} does not support RL (training mode 'rl')",
                        "pick an RL-capable model from synth_nb.flows.catalogue.RL_MODELS")]
    return []


def _judge_problems(cfg: RlConfig) -> list[Problem]:
    problems: list[Problem] = []
    if cfg.judge is not None:
        options = cfg.judge.options
        if options is None:
            problems.append(Problem(("judge", "options"), "[judge.options] is required when [judge] is present",
                                    "add [judge.options] with provider = \"openai\" and model = \"...\""))
        elif options.event is False and options.outcome is False:
            problems.append(Problem(("judge", "options"), "at least one of event / outcome must be true",
                                    "set event = true or outcome = true"))
    weights = cfg.rubric.weights if cfg.rubric is not None else None
    if weights is not None:
        values = [1.0 if weights.env is None else weights.env, weights.event or 0.0, weights.outcome or 0.0]
        if not any(values):
            problems.append(Problem(("rubric", "weights"), "rubric weights must not all be zero",
                                    "give env, event or outcome a positive weight"))
    return problems


def resolve_rl_model(cfg: RlConfig, override: str | None = None) -> tuple[Literal["source", "base"], str]:
    """The model 0.2.24's RL builder would use: ``--model`` (as a source) else ``[model]``.

    Returns ``("base", canonical id)`` or ``("source", id as written, base ids re-cased)``.
    """
    source = override.strip() if override and override.strip() else None
    base = None
    if source is None and cfg.model is not None:
        source = (cfg.model.source or "").strip() or None
        base = (cfg.model.base or "").strip() or None
    if bool(source) == bool(base):
        raise ConfigError(
            "exactly one of [model].source or [model].base is required", key="model",
            hint="set [model].base for a base model (e.g. 'Qwen/Qwen3-1.7B'), [model].source for a fine-tuned "
            "id, or pass --model",
        )
    if base is not None:
        problems = _model_id_problems(("model", "base"), base, base_only=True)
        if problems:
            raise ConfigError(problems[0].message, key="model.base", hint=problems[0].hint)
        return "base", catalogue.canonical_model(base) or base
    source = source or ""
    problems = _model_id_problems(("model", "source"), source, base_only=False)
    if problems:
        raise ConfigError(problems[0].message, key="model.source", hint=problems[0].hint)
    return "source", catalogue.canonical_model(source) or source
