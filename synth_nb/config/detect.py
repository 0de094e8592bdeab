"""Which flow a parsed TOML belongs to: each registered flow is asked, in order, whether it claims it.

The built-in flows decide by the same keys as synth-ai 0.2.24: ``[prompt_learning]`` first, then RL's
``[algorithm]`` / ``[rollout]`` keys, then SFT's. A top-level ``type = "rl"`` is deliberately not consulted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synth_nb.flows.registry import all_flows

__all__ = ["detect_flow", "expected_tables_hint", "not_a_training_config"]


def detect_flow(raw: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """Return ``(flow name, algorithm)``; ``(None, None)`` when no flow claims the document.

    ``algorithm`` is what the flow reads from the document (``"gepa"``/``"mipro"`` for prompt learning,
    ``None`` when missing or unknown, and for flows without algorithms).
    """
    if not isinstance(raw, Mapping):
        return None, None
    for flow in all_flows():
        if flow.claims(raw):
            return flow.name, flow.algorithm_of(raw)
    return None, None


def expected_tables_hint() -> str:
    """How to write a config some flow claims (``add [prompt_learning] ... or [job] with [compute] (SFT)``)."""
    hints = [flow.detect_hint for flow in all_flows() if flow.detect_hint]
    if len(hints) > 1:
        hints[-1] = "or " + hints[-1]
    return "add " + ", ".join(hints)


def not_a_training_config() -> str:
    """The message for a TOML no flow claims, naming every flow."""
    labels = [flow.label for flow in all_flows()]
    which = " or ".join(labels) if len(labels) < 3 else ", ".join(labels[:-1]) + " or " + labels[-1]
    return f"not a training config: cannot tell whether it is {which}"
