"""RL schema: required tables, model rules, judge/rubric, and the 0.2.24-equal dump."""

from __future__ import annotations

from pathlib import Path

import pytest
from config._samples import FIXTURES, MINIMAL_RL
from minimal_configs import config_problems

from synth_nb.config import ConfigError, load_config, load_config_text
from synth_nb.flows.rl.config import RlConfig, resolve_rl_model


def test_minimal_rl_is_valid_and_resolves_base_model() -> None:
    loaded = load_config_text(MINIMAL_RL, "rl.toml")
    assert loaded.flow == "rl" and loaded.algorithm is None and loaded.warnings == []
    assert isinstance(loaded.model, RlConfig)
    assert resolve_rl_model(loaded.model) == ("base", "Qwen/Qwen3-4B")
    assert resolve_rl_model(loaded.model, "rl:qwen/qwen3-4b:job1") == ("source", "rl:qwen/qwen3-4b:job1")
    assert resolve_rl_model(loaded.model, "qwen/qwen3-1.7b") == ("source", "Qwen/Qwen3-1.7B")


def test_shipped_rl_example_dumps_every_table() -> None:
    loaded = load_config(FIXTURES / "rl_from_base_qwen4b.toml")
    dumped = loaded.model.model_dump(exclude_none=True)
    assert dumped["topology"]["gpus_for_ref"] == 1
    assert dumped["reference"]["placement"] == "dedicated"
    assert dumped["rollout"]["task_app_origin_rewards_only"] is True  # unknown keys pass through
    assert dumped["training"]["weight_sync"] == {"enable": True, "targets": ["policy"], "weight_sync_interval": 1}
    assert any("rollout.task_app_origin_rewards_only" in w for w in loaded.warnings)


def test_missing_rollout_and_topology_are_named() -> None:
    text = MINIMAL_RL.split("[topology]")[0]
    keys = {p.key for p in config_problems(text, "rl.toml")}
    assert "rollout" in keys
    text = MINIMAL_RL.replace("[topology]\ngpus_for_vllm = 1\ngpus_for_training = 1\n", "")
    [problem] = config_problems(text, "rl.toml")
    assert problem.key == "topology" and "[compute.topology]" in problem.message


def test_compute_topology_satisfies_topology() -> None:
    text = MINIMAL_RL.replace("[topology]", "[compute.topology]")
    assert load_config_text(text, "rl.toml").model.compute.topology.gpus_for_vllm == 1


def test_policy_only_config_loads_with_a_warning_and_needs_model_override() -> None:
    text = MINIMAL_RL.replace('[model]\nbase = "Qwen/Qwen3-4B"', '[policy]\nmodel_name = "Qwen/Qwen3-4B"')
    loaded = load_config_text(text, "rl.toml")
    assert any("--model" in w for w in loaded.warnings)
    with pytest.raises(ConfigError, match="exactly one of"):
        resolve_rl_model(loaded.model)
    assert resolve_rl_model(loaded.model, "Qwen/Qwen3-8B") == ("source", "Qwen/Qwen3-8B")


def test_policy_with_model_instead_of_model_name_is_rejected() -> None:
    text = MINIMAL_RL.replace('[model]\nbase = "Qwen/Qwen3-4B"', '[policy]\nmodel = "Qwen/Qwen3-4B"')
    [problem] = config_problems(text, "rl.toml")
    assert problem.key == "policy" and "model_name" in problem.message


def test_model_rules() -> None:
    both = MINIMAL_RL.replace('base = "Qwen/Qwen3-4B"', 'base = "Qwen/Qwen3-4B"\nsource = "rl:Qwen/Qwen3-4B:j"')
    assert "not both" in config_problems(both, "rl.toml")[0].message
    sft_only = MINIMAL_RL.replace("Qwen/Qwen3-4B", "Qwen/Qwen3-32B")
    [problem] = config_problems(sft_only, "rl.toml")
    assert problem.key == "model.base" and "does not support RL" in problem.message and problem.line == 10
    unknown = MINIMAL_RL.replace("Qwen/Qwen3-4B", "meta/llama")
    assert "not a supported base model" in config_problems(unknown, "rl.toml")[0].message


def test_algorithm_must_be_online_policy_gradient_gspo() -> None:
    [problem] = config_problems(MINIMAL_RL.replace('method = "policy_gradient"', 'method = "ppo"'), "rl.toml")
    assert problem.key == "algorithm.method" and problem.line == 3


def test_training_and_evaluation_need_their_fields_when_present() -> None:
    text = MINIMAL_RL + "\n[training]\nnum_epochs = 1\n\n[evaluation]\ninstances = 2\n"
    keys = {p.key for p in config_problems(text, "rl.toml")}
    assert {"training.iterations_per_epoch", "training.learning_rate", "evaluation.seeds"} <= keys


def test_judge_needs_options_with_provider_and_model() -> None:
    keys = {p.key for p in config_problems(MINIMAL_RL + "\n[judge]\ntype = \"groq\"\n", "rl.toml")}
    assert keys == {"judge.options"}
    bad = MINIMAL_RL + "\n[judge]\n[judge.options]\nprovider = \"anthropic\"\nmodel = \"\"\n"
    problems = {p.key: p for p in config_problems(bad, "rl.toml")}
    assert "openai" in problems["judge.options.provider"].message
    assert "empty" in problems["judge.options.model"].message
    both_off = MINIMAL_RL + "\n[judge.options]\nprovider = \"openai\"\nmodel = \"gpt-4o\"\nevent = false\noutcome = false\n"
    assert "event / outcome" in config_problems(both_off, "rl.toml")[0].message


def test_rubric_weights_cannot_all_be_zero_and_rubric_without_judge_warns() -> None:
    zero = MINIMAL_RL + "\n[rubric.weights]\nenv = 0\nevent = 0\noutcome = 0\n"
    assert config_problems(zero, "rl.toml")[0].key == "rubric.weights"
    loaded = load_config_text(MINIMAL_RL + "\n[rubric]\nenabled = true\n", "rl.toml")
    assert any("treated as disabled" in w for w in loaded.warnings)


def test_missing_services_warns_and_bad_url_fails() -> None:
    no_services = MINIMAL_RL.replace('[services]\ntask_url = "https://my-task-app.example.com"\n', "")
    assert any("--task-url" in w for w in load_config_text(no_services, "rl.toml").warnings)
    bad = MINIMAL_RL.replace("https://my-task-app.example.com", "my-task-app")
    assert config_problems(bad, "rl.toml")[0].key == "services.task_url"


def test_smoke_extras_are_flagged_as_removed(tmp_path: Path) -> None:
    loaded = load_config_text(MINIMAL_RL + "\n[smoke]\nmax_steps = 3\n", tmp_path / "rl.toml")
    assert loaded.warnings == []  # [smoke] is a known table
    assert loaded.model.smoke == {"max_steps": 3}
