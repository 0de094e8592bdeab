"""A deterministic keyword-overlap intent classifier: the fast, torch-free policy for tests.

Same prompt contract as the embedding policy (label names, ``Intents:`` phrases and ``Example:`` lines are
prototypes), with word overlap instead of cosine similarity, so prompt edits change its answers.
"""

from __future__ import annotations

import math
import re
from typing import Any

from synth_nb.local.policies._intents import chat_completion, parse_intent_request

__all__ = ["KeywordPolicy"]

_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = (
    "a an the i my me we our you your is are was were be been it its this that to of in on at for from with and or "
    "but if so do does did have has had not no can could would should will just still yet please what why how when "
    "where who which there their they them he she her his am as by about into than then up out")
_STOP = frozenset(_STOP_WORDS.split())


def _stems(text: str) -> frozenset[str]:
    """Lower-cased content words cut to 5 characters: a crude stemmer that is good enough here."""
    return frozenset(w[:5] for w in _WORD.findall(text.lower()) if w not in _STOP)


class KeywordPolicy:
    name = "keyword"
    model = "keyword-overlap"

    def __init__(self) -> None:
        self._cache: dict[str, frozenset[str]] = {}

    def _stems(self, text: str) -> frozenset[str]:
        cached = self._cache.get(text)
        if cached is None:
            cached = self._cache[text] = _stems(text)
        return cached

    def classify(self, query: str, prototypes: dict[str, list[str]]) -> str | None:
        words = self._stems(query)
        best_label, best_score = None, 0.0
        for label, protos in prototypes.items():
            for proto in protos:
                stems = self._stems(proto)
                if stems:
                    score = len(words & stems) / math.sqrt(len(stems))
                    if score > best_score:
                        best_label, best_score = label, score
        return best_label if best_label is not None else next(iter(prototypes), None)

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        parsed = parse_intent_request(request)
        return chat_completion(request, parsed, self.classify(parsed.query, parsed.prototypes), model=self.model)

    def close(self) -> None:
        self._cache.clear()
