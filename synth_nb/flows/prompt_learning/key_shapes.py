"""Masking of key-shaped strings (``sk_…``, ``gsk_…``) in prompt-learning outputs.

Prompts and event texts are the user's own words, so only strings shaped like a provider's API key are
masked: a looser rule would rewrite prompt text and corrupt the diffs shown next to it.
"""

from __future__ import annotations

import re

from synth_nb.secrets import mask_text

__all__ = ["mask_key_shapes"]

_KEY_SHAPE = re.compile(r"\b(?:sk|gsk|pk|rk|sk_env|sk-proj|synth|hf)[-_][A-Za-z0-9_\-]{12,}\b")


def mask_key_shapes(text: str) -> str:
    """``text`` with every key-shaped string replaced by its mask (at most its last 4 characters)."""
    return _KEY_SHAPE.sub(lambda m: mask_text(m.group(0), (m.group(0),)), text)
