"""SFT schema, including the deliberate fix: no [job].data needed when --dataset will supply it."""

from __future__ import annotations

from config._samples import FIXTURES, MINIMAL_SFT
from minimal_configs import config_problems

from synth_nb.config import load_config, load_config_text
from synth_nb.flows.sft.config import SftConfig


def test_minimal_sft() -> None:
    loaded = load_config_text(MINIMAL_SFT, "sft.toml")
    assert isinstance(loaded.model, SftConfig)
    assert loaded.model.dataset == "train.jsonl" and loaded.warnings == []


def test_sft_without_job_data_is_accepted_for_dataset_override() -> None:
    """0.2.24 rejected this even with --dataset; the flows layer checks a dataset exists."""
    loaded = load_config_text(MINIMAL_SFT.replace('data = "train.jsonl"\n', ""), "sft.toml")
    assert loaded.model.dataset is None
    assert any("--dataset" in w for w in loaded.warnings)


def test_data_path_alias() -> None:
    loaded = load_config_text(MINIMAL_SFT.replace("data =", "data_path ="), "sft.toml")
    assert loaded.model.dataset == "train.jsonl"


def test_shipped_sft_examples_load_and_report_unsent_keys() -> None:
    fft = load_config(FIXTURES / "crafter_fft_4b.toml")
    assert fft.model.hyperparameters.train_kind == "fft"
    assert fft.model.training.validation.eval_steps == 20
    assert fft.warnings == ["unknown key type — ignored (not sent)"]
    lora = load_config(FIXTURES / "crafter_sft_qwen30b_lora.toml")
    assert lora.model.hyperparameters.parallelism.deepspeed_stage == 2
    assert sum("hyperparameters.lora_" in w for w in lora.warnings) == 4


def test_model_must_be_sft_capable_base_id() -> None:
    [problem] = config_problems(MINIMAL_SFT.replace("Qwen/Qwen3-0.6B", "ft:Qwen/Qwen3-4B:abc"), "sft.toml")
    assert problem.key == "job.model" and "fine-tuned" in (problem.hint or "")
    [problem] = config_problems(MINIMAL_SFT.replace("Qwen/Qwen3-0.6B", "gpt-4o"), "sft.toml")
    assert problem.line == 7


def test_qlora_variety_is_rejected_with_the_supported_list() -> None:
    [problem] = config_problems(MINIMAL_SFT.replace('variety = "fft"', 'variety = "qlora"'), "sft.toml")
    assert problem.key == "algorithm.variety" and 'variety = "lora"' in (problem.hint or "")


def test_hyperparameter_bounds() -> None:
    text = MINIMAL_SFT + "\n[hyperparameters]\nn_epochs = 0\nwarmup_ratio = 1.5\nlearning_rate = -1\ntrain_kind = 3\n"
    problems = {p.key: p.message for p in config_problems(text, "sft.toml")}
    assert problems["hyperparameters.n_epochs"].startswith("must be > 0")
    assert problems["hyperparameters.warmup_ratio"].startswith("must be <= 1")
    assert problems["hyperparameters.learning_rate"].startswith("must be > 0")
    assert problems["hyperparameters.train_kind"] == "must be a string (got an integer)"


def test_missing_job_and_compute_fields() -> None:
    text = MINIMAL_SFT.replace('model = "Qwen/Qwen3-0.6B"\n', "").replace("gpu_count = 1\n", "")
    assert {p.key for p in config_problems(text, "sft.toml")} == {"job.model", "compute.gpu_count"}


def test_training_validation_defaults_fill_in() -> None:
    loaded = load_config_text(MINIMAL_SFT + "\n[training.validation]\neval_steps = 25\n", "sft.toml")
    assert loaded.model.training.validation.model_dump() == {
        "enabled": True, "evaluation_strategy": "steps", "eval_steps": 25, "save_best_model_at_end": True,
        "metric_for_best_model": "val.loss", "greater_is_better": False}
