"""Prompt-learning models: defaults of present sub-tables, flat aliases, dumps equal to 0.2.24's."""

from __future__ import annotations

from config._samples import FIXTURES, MINIMAL_GEPA, MINIMAL_MIPRO

from synth_nb.config import load_config, load_config_text
from synth_nb.flows.prompt_learning.config import GepaConfig, MiproConfig, PromptLearningConfig


def test_minimal_gepa_dump_matches_0_2_24() -> None:
    loaded = load_config_text(MINIMAL_GEPA, "gepa.toml")
    assert isinstance(loaded.model, PromptLearningConfig)
    assert loaded.model.prompt_learning.gepa is not None
    gepa = loaded.model.prompt_learning.gepa.model_dump(exclude_none=True)
    # 0.2.24 fills in "gepa: {env_name, proposer_type, evaluation: {train_seeds, val_seeds}}"
    assert gepa == {"env_name": "banking77", "proposer_type": "dspy",
                    "evaluation": {"train_seeds": [0, 1, 2], "val_seeds": [3, 4]}}


def test_worked_gepa_example_dump() -> None:
    text = MINIMAL_GEPA.replace("[prompt_learning.gepa.evaluation]\ntrain_seeds = [0, 1, 2]\nval_seeds = [3, 4]\n", """
[prompt_learning.gepa]
env_name = "banking77"
[prompt_learning.gepa.rollout]
budget = 200
[prompt_learning.gepa.evaluation]
seeds = [0, 1, 2, 3]
validation_seeds = [10, 11]
[prompt_learning.gepa.mutation]
llm_model = "openai/gpt-oss-120b"
llm_provider = "groq"
[prompt_learning.gepa.population]
initial_size = 8
num_generations = 3
""")
    gepa = load_config_text(text, "g.toml").model.prompt_learning.gepa.model_dump(exclude_none=True)
    assert gepa == {
        "env_name": "banking77", "proposer_type": "dspy",
        "rollout": {"budget": 200, "max_concurrent": 20, "minibatch_size": 8},
        "evaluation": {"seeds": [0, 1, 2, 3], "validation_seeds": [10, 11]},
        "mutation": {"rate": 0.3, "llm_model": "openai/gpt-oss-120b", "llm_provider": "groq"},
        "population": {"initial_size": 8, "num_generations": 3, "children_per_generation": 5,
                       "crossover_rate": 0.5, "selection_pressure": 1.0, "patience_generations": 3},
    }


def test_worked_mipro_example_dump() -> None:
    text = MINIMAL_MIPRO.replace("gpt-4o-mini", "gpt-4.1-nano").replace("[prompt_learning.mipro]\n", """[prompt_learning.mipro]
env_name = "banking77"
num_iterations = 5
num_evaluations_per_iteration = 2
batch_size = 6
max_concurrent = 16
meta_model = "llama-3.3-70b-versatile"
meta_model_provider = "groq"
test_pool = [20, 21]
reference_pool = [30, 31, 32]
""")
    pl = load_config_text(text, "m.toml").model.prompt_learning
    assert pl.policy.model_dump(exclude_none=True) == {
        "model": "gpt-4.1-nano", "provider": "openai", "inference_mode": "synth_hosted", "temperature": 0.0,
        "max_completion_tokens": 512}
    assert pl.mipro.model_dump(exclude_none=True) == {
        "num_iterations": 5, "num_evaluations_per_iteration": 2, "batch_size": 6, "max_concurrent": 16,
        "env_name": "banking77", "meta_model": "llama-3.3-70b-versatile", "meta_model_provider": "groq",
        "few_shot_score_threshold": 0.8, "token_counting_model": "gpt-4", "enforce_token_limit": True,
        "spec_max_tokens": 5000, "spec_include_examples": True,
        "bootstrap_train_seeds": [0, 1, 2], "online_pool": [3, 4, 5], "test_pool": [20, 21],
        "reference_pool": [30, 31, 32]}


def test_flat_gepa_aliases_are_declared_fields() -> None:
    gepa = GepaConfig.model_validate({"rollout_budget": 10, "mutation_rate": 0.5, "archive_size": 4})
    assert gepa.model_extra == {}
    assert gepa.model_dump(exclude_none=True) == {"env_name": "banking77", "proposer_type": "dspy",
                                                  "rollout_budget": 10, "mutation_rate": 0.5, "archive_size": 4}


def test_mipro_defaults() -> None:
    mipro = MiproConfig.model_validate({})
    assert (mipro.num_iterations, mipro.batch_size, mipro.meta_model, mipro.meta_model_provider) == (
        20, 32, "gpt-4o-mini", "openai")


def test_shipped_examples_keep_extras_in_the_dump() -> None:
    loaded = load_config(FIXTURES / "banking77_gepa.toml")
    dumped = loaded.model.prompt_learning.model_dump(exclude_none=True)
    assert dumped["gepa"]["archive"]["max_size"] == 10  # unknown but passed through, as in 0.2.24
    assert dumped["termination_config"] == {"max_cost_usd": 1.0, "max_trials": 300}
    assert loaded.model.display.show_curve is True and loaded.model.display.local_backend is True
    messages = loaded.model.prompt_learning.initial_prompt.messages
    assert [m.order for m in messages] == [0, 1]


def test_display_table_is_typed_and_typos_warn() -> None:
    loaded = load_config_text(MINIMAL_GEPA + "\n[display]\nshow_curv = false\nshow_validation = false\n", "g.toml")
    assert loaded.model.display.show_curve is True and loaded.model.display.show_validation is False
    assert loaded.warnings == ["unknown key display.show_curv (did you mean 'show_curve'?) — ignored (only "
                               "[prompt_learning] is sent)"]
