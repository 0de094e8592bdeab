"""SFT of a model the user already has: a hub id found in the local Hugging Face cache, trained with TRL.

The cache entry is a small real Llama with a trained BPE tokenizer, saved with ``save_pretrained`` into a
temporary ``HF_HOME``; nothing is downloaded. The job's first executor event says where the model came from.
"""

from __future__ import annotations

import json

import pytest
from tiny_hf_model import cache_entry

from synth_nb.local.executors.sft import SftExecutor
from synth_nb.local.training.model_choice import choose_model

from .fakes import FakeContext, write_chat_jsonl

REPO = "tiny-org/tiny-chat"


@pytest.fixture
def hf_home(tmp_path, monkeypatch):
    home = tmp_path / "hf-home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return home


def _context(tmp_path, hyperparameters, *, training=None):
    ctx = FakeContext("sft", {}, tmp_path)
    train_id = ctx.add_file(write_chat_jsonl(tmp_path / "train.jsonl", 24))
    val_id = ctx.add_file(write_chat_jsonl(tmp_path / "val.jsonl", 6))
    effective = {"data": {"validation_files": [val_id]}, **({"training": training} if training else {})}
    ctx.body = {"model": REPO, "training_file_id": train_id, "hyperparameters": hyperparameters,
                "training_type": "sft_offline", "metadata": {"effective_config": effective}}
    return ctx


@pytest.mark.torch
def test_a_hub_id_resolves_to_the_cache_when_there_and_to_the_stand_in_when_not(hf_home):
    absent = choose_model(REPO)
    assert absent.kind == "tiny" and absent.source == "tiny" and "Hugging Face cache" in absent.reason
    snapshot = cache_entry(hf_home, REPO)
    found = choose_model(REPO)
    assert (found.kind, found.source, found.path) == ("local", "hub-cache", snapshot)


@pytest.mark.torch
def test_a_cached_model_is_fine_tuned_with_trl_and_its_loss_falls(tmp_path, hf_home):
    snapshot = cache_entry(hf_home, REPO)
    ctx = _context(tmp_path, {"n_epochs": 1, "batch_size": 4, "max_steps": 30, "eval_steps": 15,
                              "learning_rate": 3e-3})
    SftExecutor().run(ctx)

    executor_events = [e for e in ctx.events if e["type"].startswith("sft.")]
    assert executor_events[0]["type"] == "sft.model.selected"
    assert executor_events[0]["data"] == {"kind": "local", "source": "hub-cache", "requested": REPO,
                                          "path": str(snapshot), "reason": executor_events[0]["data"]["reason"]}
    started = next(e for e in ctx.events if e["type"] == "sft.training.started")["data"]
    assert started["trainer"] == "trl.SFTTrainer" and started["model_source"] == "hub-cache"
    assert started["device"] == "cpu" and started["dtype"] == "float32"
    losses = ctx.series("train.loss")
    assert [m["step"] for m in ctx.metrics if m["name"] == "train.loss"] == list(range(1, 31))
    assert sum(losses[-5:]) / 5 < 0.5 * sum(losses[:5]) / 5, losses
    val = ctx.series("val.loss")
    assert len(val) == 2 and val[-1] < val[0]
    model_dir = ctx.work_dir / "model"
    assert (model_dir / "model.safetensors").is_file() and (model_dir / "tokenizer.json").is_file()
    assert json.loads((model_dir / "synth_nb_model.json").read_text())["trainer"] == "trl.SFTTrainer"
    assert ctx.result["fine_tuned_model"] == f"ft:{REPO}:{ctx.job_id}"
    samples = [e["data"] for e in ctx.events if e["type"] == "sft.sample.generated"]  # TRL's run samples too
    assert [(d["step"], d["example"]) for d in samples] == [(s, k) for s in (0, 15, 30) for k in range(3)]
    assert all(d["source"] == "validation" and d["reference"] and 0 <= d["similarity"] <= 1 for d in samples)


@pytest.mark.torch
def test_lora_through_peft_when_the_config_asks(tmp_path, hf_home):
    cache_entry(hf_home, REPO)
    ctx = _context(tmp_path, {"n_epochs": 1, "batch_size": 4, "max_steps": 4, "train_kind": "peft"},
                   training={"mode": "lora", "lora": {"r": 4, "alpha": 8}})
    SftExecutor().run(ctx)
    started = next(e for e in ctx.events if e["type"] == "sft.training.started")["data"]
    assert "LoRA r=4" in started["model"] and started["trainable_params"] < started["n_params"] / 5
    model_dir = ctx.work_dir / "model"
    assert (model_dir / "adapter_config.json").is_file() and not (model_dir / "model.safetensors").exists()
    assert ctx.result["fine_tuned_model"] == f"peft:{REPO}:{ctx.job_id}"
