"""Prompt-learning cross-field rules and the MIPRO seed-pool fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from config._samples import FIXTURES, MINIMAL_GEPA, MINIMAL_MIPRO

from synth_nb.config import ConfigError, load_config, load_config_text


def _problems(text: str) -> list[ConfigError]:
    with pytest.raises(ConfigError) as info:
        load_config_text(text, "pl.toml")
    return info.value.problems


def test_mipro_seed_pools_at_prompt_learning_level_are_used_for_mipro() -> None:
    """0.2.24's builder died with an AssertionError on this layout (7 shipped examples)."""
    loaded = load_config(FIXTURES / "heartdisease_mipro_dspy.toml")
    mipro = loaded.model.prompt_learning.mipro
    assert mipro.bootstrap_train_seeds == [0, 1, 2, 3, 4]
    assert mipro.online_pool == [5, 6, 7, 8, 9]
    assert mipro.reference_pool == [15, 16, 17, 18, 19]
    assert loaded.model.prompt_learning.bootstrap_train_seeds == [0, 1, 2, 3, 4]  # kept, as 0.2.24 sends it
    assert loaded.warnings[0].startswith("using prompt_learning.bootstrap_train_seeds, prompt_learning.online_pool "
                                         "as [prompt_learning.mipro] seed pools")
    assert loaded.raw["prompt_learning"]["bootstrap_train_seeds"] == [0, 1, 2, 3, 4]  # raw is untouched


def test_pool_in_both_places_keeps_the_mipro_value() -> None:
    text = MINIMAL_MIPRO.replace('results_folder = "results"', 'results_folder = "results"\nonline_pool = [9]')
    loaded = load_config_text(text, "m.toml")
    assert loaded.model.prompt_learning.mipro.online_pool == [3, 4, 5]
    assert any("the mipro value is used" in w for w in loaded.warnings)


def test_top_level_test_pool_is_copied_silently_like_0_2_24() -> None:
    text = MINIMAL_MIPRO.replace('results_folder = "results"', 'results_folder = "results"\ntest_pool = [9]')
    loaded = load_config_text(text, "m.toml")
    assert loaded.model.prompt_learning.mipro.test_pool == [9] and loaded.model.prompt_learning.test_pool == [9]
    assert loaded.warnings == []


def test_mipro_needs_both_pools_non_empty() -> None:
    text = MINIMAL_MIPRO.replace("online_pool = [3, 4, 5]", "online_pool = []").replace(
        "bootstrap_train_seeds = [0, 1, 2]\n", "")
    problems = {p.key: p for p in _problems(text)}
    assert "is required" in problems["prompt_learning.mipro.bootstrap_train_seeds"].message
    assert "cannot be empty" in problems["prompt_learning.mipro.online_pool"].message
    assert problems["prompt_learning.mipro.online_pool"].line == 12


def test_reference_pool_must_not_overlap() -> None:
    text = MINIMAL_MIPRO + "reference_pool = [2, 3, 99]\n"
    [problem] = _problems(text)
    assert problem.key == "prompt_learning.mipro.reference_pool" and "[2, 3]" in problem.message


def test_meta_model_needs_explicit_provider_and_no_nano() -> None:
    text = MINIMAL_MIPRO + 'meta_model = "gpt-4.1-nano"\n'
    assert _problems(text)[0].key == "prompt_learning.mipro.meta_model_provider"
    text = MINIMAL_MIPRO + 'meta_model = "gpt-4.1-nano"\nmeta_model_provider = "openai"\n'
    assert "nano" in _problems(text)[0].message


def test_mipro_modules_ids_and_edges() -> None:
    text = MINIMAL_MIPRO + """
[[prompt_learning.mipro.modules]]
module_id = "a"
edges = [["s1", "zz"]]
[[prompt_learning.mipro.modules.stages]]
stage_id = "s1"
max_instruction_slots = 200
[[prompt_learning.mipro.modules]]
module_id = "a"
[[prompt_learning.mipro.modules.stages]]
stage_id = "s1"
"""
    keys = {p.key for p in _problems(text)}
    assert keys == {"prompt_learning.mipro.modules[0].stages[0].max_instruction_slots",
                    "prompt_learning.mipro.modules[0].edges[0]", "prompt_learning.mipro.modules[1].module_id",
                    "prompt_learning.mipro.modules[1].stages[0].stage_id"}


def test_gepa_evaluation_is_required_and_names_misplaced_seeds() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(FIXTURES / "banking77_gepa_test.toml")
    [problem] = info.value.problems
    assert problem.key == "prompt_learning.gepa.evaluation"
    assert problem.line == 57  # the [prompt_learning.gepa] header
    assert "prompt_learning.evaluation_seeds" in (problem.hint or "")


def test_gepa_seed_fields() -> None:
    text = MINIMAL_GEPA.replace("train_seeds = [0, 1, 2]\nval_seeds = [3, 4]\n", "validation_pool = \"x\"\n")
    keys = {p.key for p in _problems(text)}
    assert keys == {"prompt_learning.gepa.evaluation.train_seeds", "prompt_learning.gepa.evaluation.val_seeds"}
    text = MINIMAL_GEPA.replace("train_seeds", "seeds").replace("val_seeds", "validation_seeds")
    assert load_config_text(text, "g.toml").algorithm == "gepa"


def test_policy_rules() -> None:
    text = MINIMAL_GEPA.replace('model = "llama-3.1-8b-instant"',
                                'model = "llama3-groq-70b-8192-tool-use-preview"\ninference_url = "http://x"')
    problems = {p.key: p for p in _problems(text)}
    assert "not supported for provider 'groq'" in problems["prompt_learning.policy.model"].message
    assert problems["prompt_learning.policy.inference_url"].line == 10
    text = MINIMAL_GEPA.replace('inference_mode = "synth_hosted"\n', "")
    [problem] = _problems(text)
    assert problem.key == "prompt_learning.policy.inference_mode"
    assert problem.hint == 'add inference_mode = "synth_hosted" to [prompt_learning.policy]'


def test_mutation_model_rules() -> None:
    base = MINIMAL_GEPA + "\n[prompt_learning.gepa.mutation]\nllm_model = \"llama-3.3-70b-versatile\"\n"
    assert _problems(base)[0].key == "prompt_learning.gepa.mutation.llm_provider"
    ok = base + 'llm_provider = "groq"\n'
    assert load_config_text(ok, "g.toml").model.prompt_learning.gepa.mutation.llm_provider == "groq"


def test_gepa_numeric_and_module_rules() -> None:
    text = MINIMAL_GEPA + """
[prompt_learning.gepa.archive]
pareto_eps = 2.0
[prompt_learning.gepa.population]
selection_pressure = 0.5
crossover_rate = 1.5
[[prompt_learning.gepa.modules]]
module_id = "classify"
allowed_tools = []
"""
    problems = {p.key for p in _problems(text)}
    assert problems == {"prompt_learning.gepa.population.crossover_rate"}  # pydantic stage first
    text = text.replace("crossover_rate = 1.5\n", "")
    problems = {p.key for p in _problems(text)}
    assert problems == {"prompt_learning.gepa.archive.pareto_eps", "prompt_learning.gepa.population.selection_pressure",
                        "prompt_learning.gepa.modules[0].allowed_tools"}


def test_pipeline_modules_need_matching_gepa_modules() -> None:
    text = MINIMAL_GEPA + """
[prompt_learning.initial_prompt.metadata]
pipeline_modules = ["classify", {name = "explain"}]
[[prompt_learning.gepa.modules]]
module_id = "classify"
"""
    [problem] = _problems(text)
    assert "'explain'" in problem.message


def test_spec_proposer_needs_spec_path_and_task_url_scheme() -> None:
    text = MINIMAL_GEPA.replace("127.0.0.1:8102\"", "127.0.0.1:8102\"\n[prompt_learning.gepa]\nproposer_type = \"spec\"")
    text = text.replace("http://127", "127")
    keys = {p.key for p in _problems(text)}
    assert keys == {"prompt_learning.task_app_url", "prompt_learning.gepa.spec_path"}


def test_missing_results_folder_uses_a_default_and_says_which(tmp_path: Path) -> None:
    """0.2.24 failed after creating the job; here the default folder is used and named."""
    loaded = load_config_text(MINIMAL_GEPA.replace('results_folder = "results"\n', ""), tmp_path / "g.toml")
    assert loaded.results_folder == (tmp_path / "results").resolve()
    [warning] = loaded.warnings
    assert str(tmp_path / "results") in warning and "prompt_learning.results_folder" in warning
    assert "results_folder" not in loaded.model.prompt_learning.model_dump(exclude_none=True)


def test_results_folder_is_relative_to_the_toml(tmp_path: Path) -> None:
    loaded = load_config_text(MINIMAL_GEPA.replace('"results"', '"out/r"'), tmp_path / "sub" / "g.toml")
    assert loaded.results_folder == (tmp_path / "sub" / "out" / "r").resolve()
    top = MINIMAL_GEPA.replace('results_folder = "results"\n', "")
    loaded = load_config_text('results_folder = "top"\n' + top, tmp_path / "g.toml")
    assert loaded.results_folder == (tmp_path / "top").resolve() and loaded.warnings == []


def test_secret_values_never_appear_in_messages() -> None:
    canary = "sk-canary-SECRET-0123456789"
    text = MINIMAL_GEPA.replace('results_folder = "results"', f'task_app_api_key = ["{canary}"]')
    with pytest.raises(ConfigError) as info:
        load_config_text(text, "g.toml")
    assert canary not in str(info.value)
    loaded = load_config_text(MINIMAL_GEPA + f'\n[prompt_learning.gepa.x]\napi_key = "{canary}"\n', "g.toml")
    assert all(canary not in w for w in loaded.warnings)


def test_initial_prompt_messages_must_not_be_empty_when_given() -> None:
    [problem] = _problems(MINIMAL_GEPA + "\n[prompt_learning.initial_prompt]\nid = \"p\"\nmessages = []\n")
    assert problem.key == "prompt_learning.initial_prompt.messages" and problem.line == 17
