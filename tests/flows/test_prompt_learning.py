"""Prompt-learning plans: one create step; task URL precedence; MIPRO seed fix; secrets masked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from minimal_configs import MINIMAL_GEPA

from synth_nb.config import load_config
from synth_nb.errors import ConfigError
from synth_nb.flows import plan_for
from synth_nb.flows.overrides import Overrides

from .conftest import ENV_KEY, SYNTH_KEY, bundle, write_config

GEPA = MINIMAL_GEPA.replace('results_folder', 'task_app_api_key = "${ENVIRONMENT_API_KEY}"\nresults_folder', 1)

MIPRO_TOP_LEVEL_SEEDS = """
[prompt_learning]
algorithm = "mipro"
task_app_url = "http://127.0.0.1:8102"
results_folder = "results"
bootstrap_train_seeds = [0, 1, 2]
online_pool = [3, 4, 5]

[prompt_learning.policy]
inference_mode = "synth_hosted"
provider = "openai"
model = "gpt-4o-mini"

[prompt_learning.mipro]
num_iterations = 2
"""


def test_single_create_step_with_env_key_and_masked_preview(tmp_path: Path) -> None:
    plan = plan_for(write_config(tmp_path, GEPA), Overrides(), bundle())
    (step,) = plan.steps
    assert step.path == "/prompt-learning/online/jobs" and step.headers == {"Idempotency-Key": plan.idempotency_key}
    pl = step.body["config_body"]["prompt_learning"]
    assert pl["task_app_api_key"] == ENV_KEY  # the environment key beats the ${...} written in the TOML
    assert pl["train_seeds"] == [0, 1, 2] and step.body["auto_start"] is True
    preview = plan.preview_json()
    assert ENV_KEY not in preview and SYNTH_KEY not in preview and "••••2222" in preview


def test_task_url_precedence(tmp_path: Path) -> None:
    config = write_config(tmp_path, GEPA)
    env = plan_for(config, Overrides(), bundle(TASK_APP_URL="http://env-task"))
    assert env.create_step.body["config_body"]["prompt_learning"]["task_app_url"] == "http://127.0.0.1:8102"
    assert any("TASK_APP_URL" in w and "is ignored" in w for w in env.warnings)
    cli = plan_for(config, Overrides(task_url="http://cli"), bundle(TASK_APP_URL="http://env-task"))
    assert cli.create_step.body["config_body"]["prompt_learning"]["task_app_url"] == "http://cli"


def test_mipro_seed_pools_at_top_level_are_used(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text(MIPRO_TOP_LEVEL_SEEDS)
    plan = plan_for(load_config(tmp_path / "m.toml"), Overrides(), bundle())
    mipro = plan.create_step.body["config_body"]["prompt_learning"]["mipro"]
    assert mipro["bootstrap_train_seeds"] == [0, 1, 2] and mipro["online_pool"] == [3, 4, 5]
    assert mipro["num_iterations"] == 2 and mipro["batch_size"] == 32  # defaults as 0.2.24 sends them
    assert plan.algorithm == "mipro"


def test_mipro_without_seed_pools_names_the_key(tmp_path: Path) -> None:
    text = MIPRO_TOP_LEVEL_SEEDS.replace("bootstrap_train_seeds = [0, 1, 2]\n", "")
    with pytest.raises(ConfigError, match=r"prompt_learning\.mipro\.bootstrap_train_seeds"):
        plan_for(write_config(tmp_path, text), Overrides(), bundle())


def test_model_and_dataset_overrides_are_reported_as_ignored(tmp_path: Path) -> None:
    plan = plan_for(write_config(tmp_path, GEPA), Overrides(model="Qwen/Qwen3-4B", examples=2), bundle())
    assert any(w.startswith("--model is ignored for prompt learning") for w in plan.warnings)
    assert any(w.startswith("--examples is ignored") for w in plan.warnings)
    assert "Qwen" not in json.dumps(plan.create_step.body)


def test_plan_and_step_reprs_do_not_leak_the_task_app_key(tmp_path: Path) -> None:
    plan = plan_for(write_config(tmp_path, GEPA), Overrides(), bundle())
    for text in (repr(plan), str(plan), repr(plan.create_step), repr(plan.steps)):
        assert ENV_KEY not in text and SYNTH_KEY not in text


def test_missing_environment_key_is_a_secrets_error(tmp_path: Path) -> None:
    from synth_nb.errors import SecretsError

    with pytest.raises(SecretsError, match="ENVIRONMENT_API_KEY"):
        plan_for(write_config(tmp_path, GEPA), Overrides(), bundle(env_key=None))
