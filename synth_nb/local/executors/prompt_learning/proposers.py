"""Proposers: how a new prompt text is written from the failures of the current one.

* ``offline`` (deterministic, no model): when some examples of the reflective minibatch failed, it adds each
  failed query (at most 12 words), then each solved one, as a phrase of its gold intent's line in the
  prompt's ``Intents:`` section (created when missing), at most 8 phrases per intent. It uses only what an LLM reflector would see: the inputs, outputs and feedback.
* ``llm``: the configured proposer model through an OpenAI-compatible endpoint (``mutation.llm_*`` for
  GEPA, ``meta_model*``/``meta.*`` for MIPRO). A failing call falls back to the offline rewrite for that
  proposal, and the executor says so in a warning event.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from synth_nb.local.executors.prompt_learning.router import Usage, UsageCounts
from synth_nb.local.executors.prompt_learning.settings import ProposerSpec
from synth_nb.local.policies import PolicySpec

__all__ = ["EXCHANGE_CHARS", "Proposer", "exchange_fields", "offline_rewrite"]

_HEADER = re.compile(r"^\s*Intents\s*:\s*$", re.IGNORECASE)
_LINE = re.compile(r"^\s*[-*]\s*([A-Za-z][A-Za-z0-9_]*)\s*(?::\s*(.*?))?\s*$")
_FENCE = re.compile(r"```(?:[a-zA-Z]*\n)?(.*?)```", re.DOTALL)
#: an opening fence a short reply never closed (``max_tokens`` cut it)
_OPEN_FENCE = re.compile(r"^\s*```[a-zA-Z]*\n?")
_WILDCARD = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_TIPS = (
    "Be concise and precise.", "Describe each intent with the words customers actually use.",
    "Point out how easily confused intents differ.", "Keep the required output format explicit.",
)


def _phrase(query: str, max_words: int) -> str:
    words = query.replace(";", ",").split()[:max_words]
    return " ".join(words).strip(" ?!.").lower()


def offline_rewrite(text: str, failures: Sequence[tuple[str, str]], *, max_per_intent: int = 8,
                    max_words: int = 12) -> str:
    """Add each failed ``(query, gold_label)`` as a phrase of the gold label in the ``Intents:`` section."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _HEADER.match(line)), None)
    section: dict[str, list[str]] = {}
    end = start
    if start is not None:
        end = start + 1
        while end < len(lines) and (m := _LINE.match(lines[end])):
            section[m.group(1)] = [p.strip() for p in (m.group(2) or "").split(";") if p.strip()]
            end += 1
    changed = False
    for query, label in failures:
        phrase = _phrase(query, max_words)
        phrases = section.setdefault(label, [])
        if phrase and phrase not in phrases and len(phrases) < max_per_intent:
            phrases.append(phrase)
            changed = True
    if not changed:
        return text
    block = ["Intents:"] + [f"- {label}: {'; '.join(p)}" if p else f"- {label}" for label, p in section.items()]
    if start is None or end is None:
        return text.rstrip() + "\n\n" + "\n".join(block)
    return "\n".join(lines[:start] + block + lines[end:])


def _grounding(records: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Failed examples first, then (only when something failed) the solved ones as extra grounding."""
    usable = [r for r in records if r.get("expected") and r.get("query")]
    failed = [(str(r["query"]), str(r["expected"])) for r in usable if not r.get("correct")]
    return failed + [(str(r["query"]), str(r["expected"])) for r in usable if r.get("correct")] if failed else []


class Proposer(UsageCounts):
    """Writes new prompt texts; ``kind`` is ``offline`` or ``llm``; thread-safe token accounting."""

    def __init__(self, spec: ProposerSpec, *, warn: Callable[[str], None] | None = None) -> None:
        self.spec = spec
        self.kind = "offline" if spec.offline else "llm"
        # a local model is shown by the name the config gave (the server is asked for it by its path)
        self.model = (spec.local_model or spec.model) if not spec.offline else "offline-deterministic"
        self.calls = 0
        self.fallbacks = 0
        self.usage = Usage()
        self._warn = warn
        self._lock = threading.Lock()
        #: the newest proposal's (input, raw output): the prompt sent to the proposer model and its reply as
        #: written, or (offline) the examples the rewrite was grounded on and the text it wrote
        self.last_exchange: tuple[str, str] | None = None
        self._llm: Any = None
        if not spec.offline and spec.url:
            from synth_nb.local.policies.upstream import UpstreamPolicy

            # a server the backend started for a local model needs (and gets) no key
            key = None if spec.local_model else PolicySpec(
                "upstream", provider=spec.provider, api_key_env=spec.api_key_env).resolve_key()
            self._llm = UpstreamPolicy(spec.url, key, spec.model)

    def _chat(self, system: str, user: str) -> str:
        started = time.perf_counter()
        response = self._llm.complete({
            "model": self.spec.model or "proposer", "temperature": self.spec.temperature,
            "max_tokens": self.spec.max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]})
        self.usage.add(response, time.perf_counter() - started)
        content = response["choices"][0]["message"].get("content") or ""
        self.last_exchange = (f"system: {system}\nuser: {user}", str(content))
        fenced = _FENCE.search(content)
        return (fenced.group(1) if fenced else _OPEN_FENCE.sub("", content)).strip()

    def _llm_rewrite(self, text: str, records: Sequence[Mapping[str, Any]], tip: str) -> str:
        shown = "\n\n".join(f"Input: {r.get('Inputs')}\nOutput: {r.get('Generated Outputs')}\n"
                            f"Feedback: {r.get('Feedback')}" for r in list(records)[:12])
        system = ("You improve the instruction given to a language model. Reply with the complete new "
                  "instruction inside one ``` block and nothing else. Keep every {placeholder} unchanged.")
        user = (f"Current instruction:\n```\n{text}\n```\n\nHow it did on some examples:\n\n{shown}\n\n"
                f"Write a better instruction. {tip} {self.spec.metaprompt or ''}").strip()
        proposed = self._chat(system, user)
        if not proposed or set(_WILDCARD.findall(text)) - set(_WILDCARD.findall(proposed)):
            raise ValueError("the proposer reply was empty or dropped a {placeholder}")
        return proposed

    def rewrite(self, text: str, records: Sequence[Mapping[str, Any]], *, tip: str = "") -> str:
        """One new text for ``text`` from reflective ``records`` (keys query/expected/correct + GEPA's)."""
        with self._lock:
            self.calls += 1
        if self._llm is not None:
            try:
                return self._llm_rewrite(text, records, tip)
            except Exception as exc:
                with self._lock:
                    self.fallbacks += 1
                if self._warn is not None:
                    self._warn(f"proposer model call failed ({type(exc).__name__}: {str(exc)[:160]}); "
                               "used the offline rewrite for this proposal")
        grounding = _grounding(records)
        rewritten = offline_rewrite(text, grounding)
        self.last_exchange = ("offline rewrite grounded on (query -> expected):\n" + "\n".join(
            f"{query} -> {label}" for query, label in grounding) if grounding else "no failed example: unchanged",
            rewritten)
        return rewritten

    def gepa_proposer(self) -> Callable[..., dict[str, str]]:
        """``custom_candidate_proposer`` for ``gepa.optimize``."""
        def propose(candidate: dict[str, str], reflective_dataset: Mapping[str, Sequence[Mapping[str, Any]]],
                    components_to_update: list[str]) -> dict[str, str]:
            return {name: self.rewrite(candidate[name], reflective_dataset.get(name, []))
                    for name in components_to_update}
        return propose

    def instruction_variants(self, text: str, records: Sequence[Mapping[str, Any]], n: int,
                             rng: random.Random) -> list[str]:
        """MIPRO's instruction pool: ``text`` first, then up to ``n - 1`` distinct rewrites grounded on
        random halves of ``records`` (the dataset-aware proposals)."""
        return [variant for variant, _ in self.instruction_proposals(text, records, n, rng)]

    def instruction_proposals(self, text: str, records: Sequence[Mapping[str, Any]], n: int,
                              rng: random.Random) -> list[tuple[str, tuple[str, str] | None]]:
        """``instruction_variants`` each with the exchange that wrote it (``last_exchange``; None for ``text``)."""
        variants: list[tuple[str, tuple[str, str] | None]] = [(text, None)]
        attempts = 0
        pool = list(records)
        while len(variants) < n and attempts < 4 * n and pool:
            attempts += 1
            subset = rng.sample(pool, k=max(1, len(pool) // 2))
            new = self.rewrite(text, subset, tip=rng.choice(_TIPS))
            if all(new != known for known, _ in variants):
                variants.append((new, self.last_exchange))
        return variants

    def close(self) -> None:
        if self._llm is not None:
            self._llm.close()


#: the longest proposer input or output a proposal event carries (its full length is said beside it)
EXCHANGE_CHARS = 4000


def exchange_fields(exchange: tuple[str, str] | None) -> dict[str, Any]:
    """A proposal event's ``proposer_input`` / ``proposer_output`` (each cut to ``EXCHANGE_CHARS``, its full
    length in ``*_chars``): what the proposer was asked and answered, bounded like any event text."""
    if not exchange:
        return {}
    asked, answered = exchange
    return {"proposer_input": asked[:EXCHANGE_CHARS], "proposer_input_chars": len(asked),
            "proposer_output": answered[:EXCHANGE_CHARS], "proposer_output_chars": len(answered)}
