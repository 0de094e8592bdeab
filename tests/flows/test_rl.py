"""RL plans: backend verification, then creation with an Idempotency-Key; task URL and model rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from minimal_configs import MINIMAL_RL, with_values

from synth_nb.errors import ConfigError, OverrideError
from synth_nb.flows import plan_for
from synth_nb.flows.overrides import Overrides

from .conftest import bundle, write_config

CONFIG = with_values(MINIMAL_RL, task_url="https://task.example.com/", label="run")


def test_verify_then_create_with_idempotency(tmp_path: Path) -> None:
    plan = plan_for(write_config(tmp_path, CONFIG), Overrides(), bundle())
    verify, create = plan.steps
    assert (verify.kind, verify.path, verify.body) == ("check", "/rl/verify_task_app",
                                                       {"endpoint_base_url": "https://task.example.com/"})
    assert create.path == "/rl/jobs" and create.headers == {"Idempotency-Key": plan.idempotency_key}
    assert create.body["data"]["endpoint_base_url"] == "https://task.example.com"
    assert create.body["data"]["base_model"] == "Qwen/Qwen3-4B"
    other = plan_for(write_config(tmp_path, CONFIG), Overrides(), bundle())
    assert other.idempotency_key != plan.idempotency_key  # a fresh key per plan
    given = plan_for(write_config(tmp_path, CONFIG), Overrides(idempotency="my-key"), bundle())
    assert given.create_step.headers == {"Idempotency-Key": "my-key"} and given.idempotency_key == "my-key"


def test_task_url_precedence_and_warnings(tmp_path: Path) -> None:
    config = write_config(tmp_path, CONFIG)
    env = plan_for(config, Overrides(), bundle(TASK_APP_URL="http://env-task"))
    assert env.steps[0].body == {"endpoint_base_url": "http://env-task"}
    assert any("TASK_APP_URL" in w and "replaces [services].task_url" in w for w in env.warnings)
    cli = plan_for(config, Overrides(task_url="http://cli-task"), bundle(TASK_APP_URL="http://env-task"))
    assert cli.create_step.body["data"]["config"]["services"]["task_url"] == "http://cli-task"
    assert any(w.startswith("--task-url http://cli-task replaces") for w in cli.warnings)


def test_missing_task_url_is_an_error_not_a_placeholder(tmp_path: Path) -> None:
    config = write_config(tmp_path, CONFIG.replace('[services]\ntask_url = "https://task.example.com/"\n', ""))
    with pytest.raises(ConfigError, match=r"services\.task_url.*TASK_APP_URL.*--task-url"):
        plan_for(config, Overrides(), bundle())
    plan = plan_for(config, Overrides(), bundle(TASK_APP_URL="http://env-task"))
    assert plan.create_step.body["data"]["config"]["services"] == {"task_url": "http://env-task"}


def test_model_override_becomes_the_source(tmp_path: Path) -> None:
    config = write_config(tmp_path, CONFIG)
    data = plan_for(config, Overrides(model="rl:Qwen/Qwen3-4B:job123"), bundle()).create_step.body["data"]
    assert data["model"] == "rl:Qwen/Qwen3-4B:job123" and "base_model" not in data
    assert data["config"]["model"]["base"] == "Qwen/Qwen3-4B"  # the config itself is sent as written
    with pytest.raises(OverrideError, match="does not support RL"):
        plan_for(config, Overrides(model="Qwen/Qwen3-32B"), bundle())
    with pytest.raises(OverrideError, match="not a supported model"):
        plan_for(config, Overrides(model="ft:REPLACE_WITH_MODEL_ID"), bundle())


def test_policy_table_alone_names_the_model(tmp_path: Path) -> None:
    text = CONFIG.replace('[model]\nbase = "Qwen/Qwen3-4B"', '[policy]\nmodel_name = "qwen/qwen3-1.7b"')
    plan = plan_for(write_config(tmp_path, text), Overrides(), bundle())
    data = plan.create_step.body["data"]
    assert data["base_model"] == "Qwen/Qwen3-1.7B"
    assert data["config"]["policy"]["temperature"] == 0.7  # 0.2.24's schema defaults are filled in


def test_both_base_and_source_is_an_error(tmp_path: Path) -> None:
    text = CONFIG.replace('base = "Qwen/Qwen3-4B"', 'base = "Qwen/Qwen3-4B"\nsource = "rl:Qwen/Qwen3-4B:j"')
    with pytest.raises(ConfigError, match="exactly one"):
        plan_for(write_config(tmp_path, text), Overrides(), bundle())


def test_ignored_overrides_are_warned(tmp_path: Path) -> None:
    plan = plan_for(write_config(tmp_path, CONFIG), Overrides(examples=3), bundle())
    assert plan.warnings == ["--examples is ignored for RL jobs: RL collects its data from the task app"]
