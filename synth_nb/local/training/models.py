"""Building, loading and saving the models the local workers train (imports torch and transformers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GPT2Config, GPT2LMHeadModel

from synth_nb.local.training.model_choice import ModelChoice
from synth_nb.local.training.tokenizer import ByteTokenizer, ChatTokenizer, HfChatTokenizer

__all__ = ["LoadedModel", "apply_lora", "load_model", "save_model", "TINY_DEFAULTS"]

#: the research-measured tiny model: 2 layers, d=128, 4 heads (0.46 M parameters with the byte vocabulary)
TINY_DEFAULTS = {"n_layer": 2, "n_embd": 128, "n_head": 4}
#: marker file saved next to the weights of models trained with the byte tokenizer
_META_FILE = "synth_nb_model.json"


class LoadedModel:
    def __init__(self, model: Any, tokenizer: ChatTokenizer, description: str, max_positions: int) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.description = description
        self.max_positions = max_positions

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    @property
    def n_trainable(self) -> int:
        return sum(p.numel() for p in self.model.parameters() if p.requires_grad)


def _tiny(choice: ModelChoice, sequence_length: int, seed: int, overrides: dict[str, Any]) -> LoadedModel:
    tok = ByteTokenizer()
    shape: dict[str, Any] = {**TINY_DEFAULTS, **{k: int(v) for k, v in overrides.items() if k in TINY_DEFAULTS}}
    torch.manual_seed(seed)
    settings: dict[str, Any] = {"vocab_size": tok.vocab_size, "n_positions": max(64, sequence_length),
                                "bos_token_id": tok.bos_id, "eos_token_id": tok.end_id, "pad_token_id": tok.pad_id,
                                **shape}
    config = GPT2Config(**settings)
    model = GPT2LMHeadModel(config)
    desc = f"tiny random-init GPT-2 (L{shape['n_layer']}, d{shape['n_embd']}, byte tokenizer)"
    return LoadedModel(model, tok, desc, config.n_positions)


def _positions(config: Any) -> int:
    for key in ("n_positions", "max_position_embeddings", "max_seq_len"):
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    return 2048


def _local(path: Path) -> LoadedModel:
    meta_file = path / _META_FILE
    meta = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
    if (path / "adapter_config.json").is_file():
        from peft import AutoPeftModelForCausalLM

        model = AutoPeftModelForCausalLM.from_pretrained(str(path), local_files_only=True,
                                                         is_trainable=True).merge_and_unload()
    else:
        model = AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True, dtype=torch.float32)
    tokenizer: ChatTokenizer
    if meta.get("tokenizer") == "byte":
        tokenizer = ByteTokenizer()
    else:
        tok_dir = meta.get("tokenizer_dir") or str(path)
        tokenizer = HfChatTokenizer(AutoTokenizer.from_pretrained(tok_dir, local_files_only=True))
    desc = (f"{meta['description']} (from {meta.get('job_id') or path.name})" if meta.get("description")
            else f"local model {path.name} ({model.config.model_type})")
    return LoadedModel(model, tokenizer, desc, _positions(model.config))


def load_model(choice: ModelChoice, *, sequence_length: int = 256, seed: int = 0,
               tiny_overrides: dict[str, Any] | None = None) -> LoadedModel:
    """The model the choice names, in float32 on the CPU, ready for training."""
    if choice.kind == "local" and choice.path is not None:
        return _local(choice.path)
    return _tiny(choice, sequence_length, seed, tiny_overrides or {})


def apply_lora(loaded: LoadedModel, *, r: int, alpha: int, dropout: float,
               target_modules: list[str] | None) -> None:
    """Wrap the model with a peft LoRA adapter (base weights frozen); GPT-2's Conv1D needs fan_in_fan_out."""
    from peft import LoraConfig, get_peft_model

    is_gpt2 = getattr(loaded.model.config, "model_type", "") == "gpt2"
    targets: Any = target_modules or (["c_attn", "c_proj", "c_fc"] if is_gpt2 else "all-linear")
    if targets == ["all-linear"]:
        targets = "all-linear"
    config = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules=targets,
                        fan_in_fan_out=is_gpt2, task_type="CAUSAL_LM")
    loaded.model = get_peft_model(loaded.model, config)
    loaded.description += f" + LoRA r={r} alpha={alpha}"


def save_model(loaded: LoadedModel, folder: Path, meta: dict[str, Any]) -> list[Path]:
    """Save weights (or the LoRA adapter) plus tokenizer info; returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    loaded.model.save_pretrained(str(folder))
    tok = loaded.tokenizer
    extra = dict(meta)
    if isinstance(tok, ByteTokenizer):
        extra["tokenizer"] = "byte"
    elif isinstance(tok, HfChatTokenizer):
        tok.tok.save_pretrained(str(folder))
        extra["tokenizer"] = "hf"
    (folder / _META_FILE).write_text(json.dumps(extra, indent=2))
    return sorted(p for p in folder.rglob("*") if p.is_file())
