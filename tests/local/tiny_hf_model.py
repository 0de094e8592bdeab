"""A small real Hugging Face chat model built in the test: a BPE tokenizer trained here, a 2-layer Llama.

``save_tiny_chat_model(folder)`` writes what ``from_pretrained`` loads (config, safetensors, tokenizer with a
chat template); ``cache_entry(hf_home, repo_id)`` lays it out as the Hugging Face hub cache does
(``hub/models--owner--name/snapshots/<commit>/`` plus ``refs/main``), so code that resolves a hub id through
the cache finds it there and nothing is downloaded.
"""

from __future__ import annotations

import secrets
from pathlib import Path

CORPUS = [
    "Answer with the capital.", "Capital of France? Paris", "Capital of Japan? Tokyo", "Capital of Italy? Rome",
    "Capital of Peru? Lima", "Capital of Kenya? Nairobi", "Capital of Chile? Santiago", "system user assistant",
    "Hello there! How can I help you today?", "banking card transfer exchange rate",
]
CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def save_tiny_chat_model(folder: Path, *, seed: int = 0) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<unk>", "<pad>", "<|im_start|>", "<|im_end|>"]
    raw = Tokenizer(models.BPE(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.train_from_iterator(CORPUS * 4, trainers.BpeTrainer(vocab_size=320, special_tokens=specials,
                                                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="<unk>", pad_token="<pad>",
                                  bos_token="<|im_start|>", eos_token="<|im_end|>")
    tok.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=256,
                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                         tie_word_embeddings=True)
    folder.mkdir(parents=True, exist_ok=True)
    LlamaForCausalLM(config).save_pretrained(str(folder))
    tok.save_pretrained(str(folder))
    return folder


def cache_entry(hf_home: Path, repo_id: str) -> Path:
    """The model saved as the hub cache holds ``repo_id`` under ``hf_home``; returns its snapshot folder."""
    commit = secrets.token_hex(20)
    repo = hf_home / "hub" / f"models--{repo_id.replace('/', '--')}"
    snapshot = save_tiny_chat_model(repo / "snapshots" / commit)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    return snapshot
