"""SFT plans: local dataset check, uploads (with --examples), create, start; overrides and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth_nb.config import load_config
from synth_nb.errors import ConfigError, DatasetError, OverrideError
from synth_nb.flows import plan_for
from synth_nb.flows.overrides import Overrides

from .conftest import VALID_LINE, bundle, write_config

CONFIG = """
[algorithm]
type = "offline"
method = "sft"
variety = "fft"

[job]
model = "qwen/qwen3-0.6b"
data = "data/train.jsonl"

[compute]
gpu_type = "H100"
gpu_count = 1
"""


def _dataset(folder: Path, name: str = "data/train.jsonl", lines: int = 3) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(VALID_LINE * lines)
    return path


def test_steps_upload_create_start(tmp_path: Path) -> None:
    data = _dataset(tmp_path)
    plan = plan_for(write_config(tmp_path, CONFIG), Overrides(), bundle(env_key=None))
    assert [(s.kind, s.method, s.path) for s in plan.steps] == [
        ("upload", "POST", "/files"), ("json", "POST", "/learning/jobs"),
        ("json", "POST", "/learning/jobs/{job_id}/start")]
    upload, create, start = plan.steps
    assert upload.upload == data and upload.ref == "training_file" and upload.body == {"purpose": "fine-tune"}
    assert "3 valid examples" in upload.description
    assert create.body["model"] == "Qwen/Qwen3-0.6B"
    assert create.body["training_file_id"] == {"$ref": "training_file"}
    assert create.headers["Idempotency-Key"] == plan.idempotency_key
    assert start.body == {}
    assert plan.backend_url == "https://agent-learning.onrender.com/api"


def test_examples_limits_the_upload(tmp_path: Path) -> None:
    _dataset(tmp_path, lines=10)
    plan = plan_for(write_config(tmp_path, CONFIG), Overrides(examples=4), bundle())
    assert plan.steps[0].body == {"purpose": "fine-tune", "limit_lines": 4}
    assert "first 4 examples" in plan.steps[0].description
    plan = plan_for(write_config(tmp_path, CONFIG), Overrides(examples=40), bundle())
    assert any("only has 10 examples" in w for w in plan.warnings)


def test_dataset_override_replaces_job_data_and_is_enough_without_it(tmp_path: Path) -> None:
    other = _dataset(tmp_path, "elsewhere.jsonl")
    no_data = CONFIG.replace('data = "data/train.jsonl"\n', "")
    (tmp_path / "config.toml").write_text(no_data)
    loaded = load_config(tmp_path / "config.toml")  # deliberate fix: [job].data is optional
    plan = plan_for(loaded, Overrides(dataset=other), bundle())
    assert plan.steps[0].upload == other
    assert not any("[job].data" in w for w in plan.warnings)
    with pytest.raises(ConfigError, match=r"job\.data.*--dataset"):
        plan_for(loaded, Overrides(), bundle())


def test_missing_and_invalid_datasets(tmp_path: Path) -> None:
    config = write_config(tmp_path, CONFIG)
    with pytest.raises(DatasetError, match="dataset file not found"):
        plan_for(config, Overrides(), bundle())
    with pytest.raises(DatasetError, match="--dataset file not found"):
        plan_for(config, Overrides(dataset=tmp_path / "nope.jsonl"), bundle())
    bad = _dataset(tmp_path)
    bad.write_text(VALID_LINE + '{"messages": []}\n')
    with pytest.raises(DatasetError, match=r"train\.jsonl:2"):
        plan_for(config, Overrides(), bundle())


def test_dataset_found_relative_to_cwd_is_used_with_a_warning(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    _dataset(tmp_path)
    monkeypatch.chdir(tmp_path)
    plan = plan_for(write_config(configs, CONFIG), Overrides(), bundle())
    assert plan.steps[0].upload == (tmp_path / "data/train.jsonl").resolve()
    assert any("working directory" in w for w in plan.warnings)


def test_validation_file_upload_and_missing_warning(tmp_path: Path) -> None:
    _dataset(tmp_path)
    text = CONFIG + '\n[data]\nvalidation_path = "data/val.jsonl"\n'
    plan = plan_for(write_config(tmp_path, text), Overrides(), bundle())
    assert any("not found" in w for w in plan.warnings) and len(plan.steps) == 3
    _dataset(tmp_path, "data/val.jsonl")
    plan = plan_for(write_config(tmp_path, text), Overrides(), bundle())
    assert plan.steps[1].ref == "validation_file"
    effective = plan.create_step.body["metadata"]["effective_config"]
    assert effective["data"]["validation_files"] == [{"$ref": "validation_file"}]


def test_model_override_and_model_errors(tmp_path: Path) -> None:
    _dataset(tmp_path)
    config = write_config(tmp_path, CONFIG)
    assert plan_for(config, Overrides(model="qwen/qwen3-8b"), bundle()).create_step.body["model"] == "Qwen/Qwen3-8B"
    with pytest.raises(OverrideError, match="not a supported SFT base model"):
        plan_for(config, Overrides(model="ft:Qwen/Qwen3-4B:abc"), bundle())
    with pytest.raises(ConfigError, match=r"\[job\.model\].*not a supported"):
        plan_for(write_config(tmp_path, CONFIG.replace("qwen/qwen3-0.6b", "gpt-4o")), Overrides(), bundle())


def test_experimental_models_need_permission(tmp_path: Path) -> None:
    _dataset(tmp_path)
    config = write_config(tmp_path, CONFIG.replace("qwen/qwen3-0.6b", "Qwen/Qwen3-4B-Thinking-2507"))
    with pytest.raises(ConfigError, match="experimental.*--allow-experimental"):
        plan_for(config, Overrides(), bundle())
    assert plan_for(config, Overrides(allow_experimental=True), bundle()).flow == "sft"
    assert plan_for(config, Overrides(), bundle(SDK_EXPERIMENTAL="1")).flow == "sft"
    with pytest.raises(ConfigError):
        plan_for(config, Overrides(allow_experimental=False), bundle(SDK_EXPERIMENTAL="1"))


def test_bad_hyperparameter_names_the_key(tmp_path: Path) -> None:
    _dataset(tmp_path)
    config = write_config(tmp_path, CONFIG + "\n[hyperparameters]\nn_epochs = 0\n")
    with pytest.raises(ConfigError, match=r"\[hyperparameters\.n_epochs\]"):
        plan_for(config, Overrides(), bundle())


def test_ignored_overrides_become_warnings(tmp_path: Path) -> None:
    _dataset(tmp_path)
    plan = plan_for(write_config(tmp_path, CONFIG), Overrides(task_url="http://t"), bundle())
    assert plan.warnings == ["--task-url is ignored for SFT jobs: SFT does not use a task app"]
