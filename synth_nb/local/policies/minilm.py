"""The bundled all-MiniLM-L6-v2 sentence encoder, run with numpy: the offline policy's model.

Why not sentence-transformers: importing it (transformers, torch, sympy, scipy …) costs 15–25 s of CPU
before the first rollout, for a six-layer BERT whose forward pass is a few matrix products. Here the
bundled files are read with the libraries that wrote them (``tokenizers`` for ``tokenizer.json``,
``safetensors`` for the weights) and the forward pass follows ``transformers``' ``BertModel`` in eval mode,
then sentence-transformers' mean pooling and L2 normalisation (``modules.json`` of the package): the same
vectors (to float32 rounding) in well under a second of start-up.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

__all__ = ["MiniLMEncoder"]

#: Abramowitz & Stegun 7.1.26: erf to 1.5e-7, so exact GELU without importing scipy
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's ``gelu``, 0.5·x·(1 + erf(x/√2)) (the erf form, not the tanh approximation), without
    temporaries beyond two arrays; erf by Abramowitz & Stegun 7.1.26 (error below 1.5e-7), so scipy need
    not be imported."""
    z = np.abs(x)
    z *= np.float32(1.0 / math.sqrt(2.0))
    t = z * np.float32(_ERF_P)
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * np.float32(_ERF_A[4])
    for a in reversed(_ERF_A[:4]):
        poly += a
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # 1 - erf(|x|/√2)
    np.subtract(1.0, poly, out=poly)
    np.copysign(poly, x, out=poly)  # erf(x/√2): erf is odd
    poly += 1.0
    poly *= x
    poly *= 0.5
    return poly


def _layer_norm(x: np.ndarray, norm: tuple[np.ndarray, np.ndarray], eps: float) -> np.ndarray:
    weight, bias = norm
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * weight + bias


class MiniLMEncoder:
    """``encode(texts)`` -> unit-length float32 vectors, one row per text (sentence-transformers' output)."""

    def __init__(self, folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        max_length = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))["max_seq_length"]
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config["layer_norm_eps"])
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_length)
        self.tokenizer.no_padding()  # tokenizer.json pads to 128; batches are padded here, to their longest
        self.pad_id = int(config["pad_token_id"])
        w = load_file(str(folder / "model.safetensors"))
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.embed_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = [self._layer(w, f"encoder.layer.{i}.") for i in range(int(config["num_hidden_layers"]))]

    @staticmethod
    def _layer(w: dict[str, np.ndarray], p: str) -> dict[str, Any]:
        """One encoder layer's weights, transposed once (``x @ W`` rather than ``x @ W.T`` on every call)."""
        attn = p + "attention.self."
        return {
            "qkv": np.ascontiguousarray(np.concatenate([w[attn + n + ".weight"] for n in ("query", "key", "value")]).T),
            "qkv_b": np.concatenate([w[attn + n + ".bias"] for n in ("query", "key", "value")]),
            "out": np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
            "out_b": w[p + "attention.output.dense.bias"],
            "norm1": (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
            "up": np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
            "up_b": w[p + "intermediate.dense.bias"],
            "down": np.ascontiguousarray(w[p + "output.dense.weight"].T),
            "down_b": w[p + "output.dense.bias"],
            "norm2": (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
        }

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        batch, length = ids.shape
        # dense layers see (batch * length, hidden): one 2-D product is ~10x faster than a stacked one
        h = (self.word[ids] + self.position[:length] + self.token_type).reshape(batch * length, -1)
        h = _layer_norm(h, self.embed_norm, self.eps)
        heads, width = self.heads, h.shape[-1] // self.heads
        # padded keys get the dtype's minimum added to their scores, as transformers does
        bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * np.finfo(np.float32).min
        for layer in self.layers:
            qkv = (h @ layer["qkv"] + layer["qkv_b"]).reshape(batch, length, 3, heads, width)
            q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
            scores = (q * np.float32(1.0 / math.sqrt(width))) @ k.transpose(0, 1, 3, 2) + bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, heads * width)
            h = _layer_norm(context @ layer["out"] + layer["out_b"] + h, layer["norm1"], self.eps)
            up = _gelu(h @ layer["up"] + layer["up_b"])
            h = _layer_norm(up @ layer["down"] + layer["down_b"] + h, layer["norm2"], self.eps)
        weights = mask.reshape(batch, length, 1).astype(np.float32)
        pooled = (h.reshape(batch, length, -1) * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Texts batched by token count, each batch padded to its longest: little padding is computed."""
        ids = [e.ids for e in self.tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        out = np.empty((len(texts), self.word.shape[1]), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            batch = np.full((len(chunk), max(len(ids[i]) for i in chunk)), self.pad_id, dtype=np.int64)
            mask = np.zeros(batch.shape, dtype=np.int64)
            for row, i in enumerate(chunk):
                batch[row, :len(ids[i])] = ids[i]
                mask[row, :len(ids[i])] = 1
            out[chunk] = self._forward(batch, mask)
        return out
