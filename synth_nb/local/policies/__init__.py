"""Policies that answer the task app's chat completions during local prompt learning.

* ``offline`` — zero-shot intent classifier over MiniLM embeddings (``embedding.EmbeddingPolicy``); needs the
  ``offline-policy`` extra; serves intent-classification task apps (the bundled banking example).
* ``upstream`` — any OpenAI-compatible server by URL + key (``upstream.UpstreamPolicy``); with ``local_model``
  set, the server is a ``transformers serve`` process the backend starts for that model (``model_server``).
* ``keyword`` — deterministic word-overlap classifier for tests (``keyword.KeywordPolicy``; no torch).

Every policy has ``name``, ``model``, ``complete(request) -> response`` (OpenAI chat-completion JSON) and
``close()``. The candidate prompt is substituted before ``complete`` is called (``executors.prompt_learning.router``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["OFFLINE_ENVS", "POLICY_KINDS", "WARM_UP_THREAD", "Policy", "PolicySpec", "build_policy", "new_texts_forgotten",
           "warm_up"]

#: the name of ``warm_up``'s thread (a dry run waits for it before it times rollouts)
WARM_UP_THREAD = "synth-nb-policy-warm-up"

log = logging.getLogger(__name__)

POLICY_KINDS = ("offline", "upstream", "keyword")
#: task ids the offline classifier can serve (intent classification with the intents listed in the request)
OFFLINE_ENVS = frozenset({"banking", "banking77", "synth-nb-banking"})
#: where an upstream key is looked up when the config names no variable
_KEY_ENV_BY_PROVIDER = {"openai": "OPENAI_API_KEY", "groq": "GROQ_API_KEY", "google": "GEMINI_API_KEY"}


class Policy(Protocol):
    name: str
    model: str

    def complete(self, request: dict[str, Any]) -> dict[str, Any]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class PolicySpec:
    """Which policy to build; ``api_key`` is resolved at build time and never stored in events."""

    kind: str
    url: str | None = None
    model: str | None = None
    provider: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    #: a model the backend serves itself on 127.0.0.1 (``model_server``); ``url``/``model`` are set once it runs
    local_model: str | None = None

    def resolve_key(self, environ: dict[str, str] | None = None) -> str | None:
        env = os.environ if environ is None else environ
        if self.api_key:
            return self.api_key
        names = [self.api_key_env] if self.api_key_env else []
        names += [_KEY_ENV_BY_PROVIDER.get((self.provider or "").lower(), ""), "SYNTH_NB_POLICY_API_KEY"]
        return next((env[n] for n in names if n and env.get(n)), None)

    def describe(self) -> dict[str, Any]:
        """Safe to put in an event: no key, only where it comes from."""
        if self.local_model:
            return {"policy": self.kind, "local_model": self.local_model, "model": self.model, "url": self.url,
                    "api_key_source": None}
        return {"policy": self.kind, "model": self.model, "provider": self.provider, "url": self.url,
                "api_key_source": "config" if self.api_key else (self.api_key_env or "environment")}


def build_policy(spec: PolicySpec) -> Policy:
    if spec.kind == "keyword":
        from synth_nb.local.policies.keyword import KeywordPolicy

        return KeywordPolicy()
    if spec.kind == "offline":
        from synth_nb.local.policies.embedding import EmbeddingPolicy

        policy = EmbeddingPolicy()
        policy.load()
        return policy
    if spec.kind == "upstream" and spec.url:
        from synth_nb.local.policies.upstream import UpstreamPolicy

        # a server the backend started for the job's own model needs (and gets) no key
        return UpstreamPolicy(spec.url, None if spec.local_model else spec.resolve_key(), spec.model)
    raise ValueError(f"cannot build policy {spec.kind!r} (url={spec.url!r})")


def _load_offline_model(prime: Callable[[], list[dict[str, Any]]] | None) -> None:
    from synth_nb.local.policies.embedding import EmbeddingPolicy, embedding_policy_available

    if not embedding_policy_available():
        return
    try:
        policy = EmbeddingPolicy()
        policy.load()
        if prime is not None:
            policy.prime(prime())
    except Exception:  # the first job that needs it loads it again and reports the error there
        log.exception("could not load the offline policy's model in the background")


def warm_up(prime: Callable[[], list[dict[str, Any]]] | None = None) -> threading.Thread:
    """Load the offline policy's model in a background thread, so the backend's first job finds it ready,
    then encode the texts of ``prime()``'s chat requests (those the first rollouts are known to send).

    The model is shared by the process and loaded under a lock: a job that needs it meanwhile waits for this
    load rather than starting a second one. Nothing happens without the offline-policy extra.
    """
    thread = threading.Thread(target=_load_offline_model, args=(prime,), name=WARM_UP_THREAD,
                              daemon=True)
    thread.start()
    return thread


@contextlib.contextmanager
def new_texts_forgotten() -> Iterator[None]:
    """What the offline policy learns inside (embeddings of texts it had not seen) is forgotten at the end.

    Its embeddings are shared by the process, so whatever runs inside would leave the job that follows
    faster than it was timed: a rehearsal of a search embeds each new prompt's phrases once, as the job will.
    Nothing to do for a process that has not loaded that policy (it holds no embedding)."""
    embedding = sys.modules.get(f"{__name__}.embedding")
    kept = embedding.known_texts() if embedding is not None else frozenset()
    try:
        yield
    finally:
        embedding = sys.modules.get(f"{__name__}.embedding")
        if embedding is not None:
            embedding.forget_texts(kept)
