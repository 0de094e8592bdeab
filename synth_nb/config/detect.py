"""Which flow a parsed TOML belongs to, decided by the same keys as synth-ai 0.2.24 (spec §2.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["EXPECTED_TABLES_HINT", "Flow", "detect_flow"]

Flow = Literal["rl", "sft", "prompt_learning"]

_RL_METHODS = {"policy_gradient", "ppo", "gspo"}
_SFT_METHODS = {"sft", "supervised_finetune"}
_PL_ALGORITHMS = {"gepa", "mipro"}

EXPECTED_TABLES_HINT = (
    "add [prompt_learning] with algorithm = \"gepa\" or \"mipro\" (prompt learning), "
    "[algorithm] with type = \"online\" (RL) or type = \"offline\" (SFT), "
    "[rollout] with [policy] or [model] (RL), or [job] with [compute] (SFT)"
)


def _lower(value: Any) -> str:
    return value.lower() if isinstance(value, str) else ""


def detect_flow(raw: Mapping[str, Any]) -> tuple[Flow | None, str | None]:
    """Return ``(flow, algorithm)``; ``(None, None)`` when the document is not a training config.

    ``algorithm`` is ``"gepa"``/``"mipro"`` for prompt learning (``None`` if missing or unknown) and
    ``None`` for RL and SFT. A top-level ``type = "rl"`` is deliberately not consulted, as in 0.2.24.
    """
    if not isinstance(raw, Mapping):
        return None, None
    if "prompt_learning" in raw:
        section = raw["prompt_learning"]
        algorithm = _lower(section.get("algorithm")) if isinstance(section, Mapping) else ""
        return "prompt_learning", algorithm if algorithm in _PL_ALGORITHMS else None
    algo = raw.get("algorithm")
    algo = algo if isinstance(algo, Mapping) else {}
    kind, method = _lower(algo.get("type")), _lower(algo.get("method"))
    if kind == "online" or method in _RL_METHODS:
        return "rl", None
    if raw.get("rollout") and (raw.get("policy") or raw.get("model")):
        return "rl", None
    if kind == "offline" or method in _SFT_METHODS:
        return "sft", None
    if raw.get("job") and raw.get("compute"):
        return "sft", None
    return None, None
