"""Prompt-learning config schema: ``[prompt_learning]`` with ``policy``, ``initial_prompt``,
``gepa`` (rollout, evaluation, mutation, population, archive, token, modules) and ``mipro`` (seeds, meta
model, modules, bootstrap...). Defaults mirror 0.2.24 so dumps match what it sends."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import SecretStr

from synth_nb.flows.schema import (
    ExtraModel,
    FreeTable,
    NonBlankStr,
    NonNegFloat,
    NonNegInt,
    PosFloat,
    PosInt,
    Seed,
    UnitFloat,
)

__all__ = [
    "DisplayConfig",
    "GepaConfig",
    "MiproConfig",
    "PromptLearningConfig",
    "PromptLearningPolicy",
    "PromptLearningSection",
]


class PromptLearningPolicy(ExtraModel):
    """``[prompt_learning.policy]``: the model whose prompt is optimised."""

    model: str
    provider: Literal["openai", "groq", "google"]
    inference_mode: Literal["synth_hosted"]
    temperature: NonNegFloat = 0.0
    max_completion_tokens: PosInt = 512
    policy_name: str | None = None
    #: the embedded backend's own policies (an offline classifier, a keyword matcher), or an OpenAI-compatible
    #: upstream it calls; not in 0.2.24's schema, so sent as written to a hosted backend
    local_policy: Literal["offline", "upstream", "keyword"] | None = None
    inference_url: str | None = None
    #: a model the embedded backend serves itself with ``transformers serve`` (``smollm2``, a .gguf file, a model
    #: folder, a cached hub id), or the URL of an OpenAI-compatible server of the user's with the model name it
    #: expects and the variable holding its key; local-only, like ``local_policy``
    local_model: str | None = None
    local_model_name: str | None = None
    api_key_env: SecretStr | None = None  # a variable's name, masked like every *api_key* field


class MessagePattern(ExtraModel):
    role: str
    pattern: str
    order: int = 0


class InitialPrompt(ExtraModel):
    id: str | None = None
    name: str | None = None
    messages: list[MessagePattern] = []
    wildcards: dict[str, str] = {}
    metadata: FreeTable | None = None


class GepaRollout(ExtraModel):
    budget: PosInt | None = None
    max_concurrent: PosInt = 20
    minibatch_size: PosInt = 8


class GepaEvaluation(ExtraModel):
    seeds: list[Seed] | None = None
    validation_seeds: list[Seed] | None = None
    train_seeds: list[Seed] | None = None
    val_seeds: list[Seed] | None = None
    test_pool: list[Seed] | None = None
    validation_pool: str | None = None
    validation_top_k: PosInt | None = None


class GepaMutation(ExtraModel):
    rate: UnitFloat = 0.3
    llm_model: str | None = None
    llm_provider: str = "groq"
    llm_inference_url: str | None = None
    prompt: str | None = None
    #: the embedded backend serves this model as the proposer (see ``PromptLearningPolicy.local_model``)
    local_model: str | None = None
    local_model_name: str | None = None
    api_key_env: SecretStr | None = None  # a variable's name, masked like every *api_key* field
    #: the proposer's sampling temperature and reply length on the embedded backend
    temperature: NonNegFloat | None = None
    max_tokens: PosInt | None = None


class GepaPopulation(ExtraModel):
    initial_size: PosInt = 20
    num_generations: PosInt = 10
    children_per_generation: PosInt = 5
    crossover_rate: UnitFloat = 0.5
    selection_pressure: PosFloat = 1.0
    patience_generations: NonNegInt = 3


class GepaArchive(ExtraModel):
    size: PosInt = 64
    pareto_set_size: PosInt = 64
    pareto_eps: PosFloat = 1e-6
    feedback_fraction: UnitFloat = 0.5


class GepaToken(ExtraModel):
    max_limit: PosInt | None = None
    counting_model: str = "gpt-4"
    enforce_pattern_limit: bool = True
    max_spend_usd: PosFloat | None = None


class GepaModule(ExtraModel):
    module_id: str
    max_instruction_slots: PosInt = 3
    allowed_tools: list[str] | None = None
    max_tokens: PosInt | None = None


class GepaConfig(ExtraModel):
    """``[prompt_learning.gepa]``; the flat fields are 0.2.24's deprecated aliases of the sub-tables."""

    env_name: str = "banking77"
    env_config: FreeTable | None = None
    rng_seed: int | None = None
    proposer_type: Literal["dspy", "spec"] = "dspy"
    metaprompt: str | None = None
    spec_path: str | None = None
    spec_max_tokens: PosInt | None = None
    spec_priority_threshold: NonNegInt | None = None
    modules: list[GepaModule] | None = None
    rollout: GepaRollout | None = None
    evaluation: GepaEvaluation | None = None
    mutation: GepaMutation | None = None
    population: GepaPopulation | None = None
    archive: GepaArchive | None = None
    token: GepaToken | None = None
    rollout_budget: PosInt | None = None
    max_concurrent_rollouts: PosInt | None = None
    minibatch_size: PosInt | None = None
    evaluation_seeds: list[Seed] | None = None
    validation_seeds: list[Seed] | None = None
    test_pool: list[Seed] | None = None
    validation_pool: str | None = None
    validation_top_k: PosInt | None = None
    mutation_rate: UnitFloat | None = None
    mutation_llm_model: str | None = None
    mutation_llm_provider: str | None = None
    mutation_llm_inference_url: str | None = None
    mutation_prompt: str | None = None
    initial_population_size: PosInt | None = None
    num_generations: PosInt | None = None
    children_per_generation: PosInt | None = None
    crossover_rate: UnitFloat | None = None
    selection_pressure: PosFloat | None = None
    patience_generations: NonNegInt | None = None
    archive_size: PosInt | None = None
    pareto_set_size: PosInt | None = None
    pareto_eps: PosFloat | None = None
    feedback_fraction: UnitFloat | None = None
    max_token_limit: PosInt | None = None
    token_counting_model: str | None = None
    enforce_pattern_token_limit: bool | None = None
    max_spend_usd: PosFloat | None = None


class MiproMeta(ExtraModel):
    model: str
    provider: str
    inference_url: str | None = None
    temperature: NonNegFloat = 0.8
    max_tokens: PosInt = 1024
    #: the embedded backend serves this model as the proposer (see ``PromptLearningPolicy.local_model``)
    local_model: str | None = None
    local_model_name: str | None = None
    api_key_env: SecretStr | None = None  # a variable's name, masked like every *api_key* field


class MiproStage(ExtraModel):
    stage_id: str | None = None
    baseline_instruction: str | None = None
    baseline_messages: list[Any] = []
    max_instruction_slots: PosInt | None = None
    max_demo_slots: NonNegInt | None = None


class MiproModule(ExtraModel):
    module_id: str | None = None
    stages: list[MiproStage] = []
    edges: list[Any] | None = None


class MiproSeeds(ExtraModel):
    bootstrap: list[Seed] = []
    online: list[Seed] = []
    test: list[Seed] = []
    reference: list[Seed] = []


class MiproConfig(ExtraModel):
    """``[prompt_learning.mipro]``; seed pools live here (the loader copies top-level ones in)."""

    task_app_url: str | None = None
    task_app_api_key: SecretStr | None = None  # plans read the value from the raw TOML
    task_app_id: str | None = None
    num_iterations: PosInt = 20
    num_evaluations_per_iteration: PosInt = 5
    batch_size: PosInt = 32
    max_concurrent: PosInt = 20
    env_name: str = "banking77"
    env_config: FreeTable | None = None
    meta_model: str = "gpt-4o-mini"
    meta_model_provider: str = "openai"
    meta_model_inference_url: str | None = None
    meta_model_temperature: NonNegFloat | None = None
    meta_model_max_tokens: PosInt | None = None
    few_shot_score_threshold: UnitFloat = 0.8
    results_file: str | None = None
    max_wall_clock_seconds: PosFloat | None = None
    max_total_tokens: PosInt | None = None
    policy_config: FreeTable | None = None
    meta: MiproMeta | None = None
    modules: list[MiproModule] | None = None
    seeds: MiproSeeds | None = None
    max_token_limit: PosInt | None = None
    max_spend_usd: PosFloat | None = None
    token_counting_model: str = "gpt-4"
    enforce_token_limit: bool = True
    tpe: FreeTable | None = None
    demo: FreeTable | None = None
    grounding: FreeTable | None = None
    meta_update: FreeTable | None = None
    spec_path: str | None = None
    spec_max_tokens: PosInt = 5000
    spec_include_examples: bool = True
    spec_priority_threshold: NonNegInt | None = None
    metaprompt: str | None = None
    bootstrap_train_seeds: list[Seed] | None = None
    online_pool: list[Seed] | None = None
    test_pool: list[Seed] | None = None
    reference_pool: list[Seed] | None = None
    max_demo_set_size: PosInt | None = None
    max_demo_sets: PosInt | None = None
    max_instruction_sets: PosInt | None = None
    full_eval_every_k: PosInt | None = None
    instructions_per_batch: PosInt | None = None
    max_instructions: PosInt | None = None
    duplicate_retry_limit: PosInt | None = None
    generate_at_iterations: list[NonNegInt] | None = None


class PromptLearningSection(ExtraModel):
    """``[prompt_learning]`` itself (sent to the backend as ``config_body.prompt_learning``)."""

    algorithm: Literal["gepa", "mipro"]
    task_app_url: str
    task_app_api_key: SecretStr | None = None  # plans read the value from the raw TOML
    task_app_id: str | None = None
    initial_prompt: InitialPrompt | None = None
    policy: PromptLearningPolicy
    gepa: GepaConfig | None = None
    mipro: MiproConfig | None = None
    env_config: FreeTable | None = None
    env_name: str | None = None
    results_folder: NonBlankStr | None = None
    env_file_path: str | None = None
    termination_config: FreeTable | None = None
    train_seeds: list[Seed] | None = None
    evaluation_seeds: list[Seed] | None = None
    bootstrap_train_seeds: list[Seed] | None = None
    online_pool: list[Seed] | None = None
    test_pool: list[Seed] | None = None
    reference_pool: list[Seed] | None = None


class DisplayConfig(ExtraModel):
    """``[display]``: local presentation switches (never sent; 0.2.24 parsed them but never used them)."""

    local_backend: bool = False
    tui: bool = False
    show_curve: bool = True
    verbose_summary: bool = True
    show_trial_results: bool = True
    show_transformations: bool = False
    show_validation: bool = True


class PromptLearningConfig(ExtraModel):
    """A whole prompt-learning TOML file; only ``prompt_learning`` is sent."""

    prompt_learning: PromptLearningSection
    display: DisplayConfig | None = None
    termination_config: FreeTable | None = None
    results_folder: NonBlankStr | None = None

    @property
    def algorithm(self) -> str:
        return self.prompt_learning.algorithm
