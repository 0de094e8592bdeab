"""Supported base models, GPU types and prompt-learning provider allow-lists.

One place answers "may I train this model, with which flow, and how is it spelled": matching is
case-insensitive, payloads always carry the canonical casing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from synth_nb.secrets.redact import shown

__all__ = [
    "EXPERIMENTAL_MODELS",
    "GPU_TYPES",
    "RL_MODELS",
    "SFT_MODELS",
    "base_model_of",
    "canonical_gpu_type",
    "canonical_model",
    "check_provider_model",
    "is_experimental",
    "is_rl_capable",
    "is_sft_capable",
    "price_of",
]


def _with_fp8(names: list[str]) -> list[str]:
    return [variant for name in names for variant in (name, f"{name}-FP8")]


_BASE = ["Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B", "Qwen3-30B-A3B", "Qwen3-32B",
         "Qwen3-4B-2507"]
_INSTRUCT = _with_fp8(["Qwen3-4B-Instruct-2507", "Qwen3-30B-A3B-Instruct-2507", "Qwen3-235B-A22B-Instruct-2507"])
_THINKING = _with_fp8(["Qwen3-4B-Thinking-2507", "Qwen3-30B-A3B-Thinking-2507", "Qwen3-235B-A22B-Thinking-2507"])
_CODER = _with_fp8(["Qwen3-Coder-30B-A3B-Instruct", "Qwen3-Coder-480B-A35B-Instruct"])
_VL = [f"Qwen3-VL-{size}-{kind}" for size in ("2B", "4B", "8B", "30B-A3B", "32B", "235B-A22B")
       for kind in ("Instruct", "Thinking")]

#: every supported base model; all of them can be fine-tuned with SFT
SFT_MODELS: tuple[str, ...] = tuple(f"Qwen/{name}" for name in _BASE + _INSTRUCT + _THINKING + _CODER + _VL)

_RL_NAMES = (
    ["Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B", "Qwen3-30B-A3B", "Qwen3-4B-2507"]
    + _with_fp8(["Qwen3-4B-Instruct-2507", "Qwen3-30B-A3B-Instruct-2507", "Qwen3-4B-Thinking-2507",
                 "Qwen3-30B-A3B-Thinking-2507", "Qwen3-Coder-30B-A3B-Instruct"])
    + [f"Qwen3-VL-{size}-{kind}" for size in ("2B", "4B", "8B") for kind in ("Instruct", "Thinking")]
)
#: base models that also support online RL (training mode ``rl``)
RL_MODELS: tuple[str, ...] = tuple(f"Qwen/{name}" for name in _RL_NAMES)

#: gated behind ``--allow-experimental`` / ``SDK_EXPERIMENTAL=1``
EXPERIMENTAL_MODELS: tuple[str, ...] = tuple(
    f"Qwen/{name}"
    for name in _with_fp8(["Qwen3-235B-A22B-Instruct-2507", "Qwen3-235B-A22B-Thinking-2507",
                           "Qwen3-Coder-480B-A35B-Instruct", "Qwen3-30B-A3B-Thinking-2507",
                           "Qwen3-4B-Thinking-2507"])
)

_LOOKUP = {name.lower(): name for name in SFT_MODELS}
_RL_SET = frozenset(RL_MODELS)


def canonical_model(name: str) -> str | None:
    """Canonical casing of a supported *base* model id, or ``None`` if it is not one."""
    if not isinstance(name, str):
        return None
    return _LOOKUP.get(name.strip().lower())


def base_model_of(name: str) -> str | None:
    """The base model behind a base id or a fine-tuned id such as ``rl:Qwen/Qwen3-4B:job123``.

    0.2.24's rule: a ``:``-separated id is accepted when some segment after the first ``:`` is a
    supported base id (the ``ft:``/``rl:`` prefixes themselves are not checked).
    """
    base = canonical_model(name)
    if base is not None or not isinstance(name, str) or ":" not in name:
        return base
    for segment in name.strip().split(":")[1:]:
        base = canonical_model(segment)
        if base is not None:
            return base
    return None


def is_sft_capable(name: str) -> bool:
    """SFT takes base ids only (no fine-tuned ids)."""
    return canonical_model(name) is not None


def is_rl_capable(name: str) -> bool:
    """RL accepts base ids and fine-tuned ids whose base supports training mode ``rl``."""
    base = base_model_of(name)
    return base is not None and base in _RL_SET


def is_experimental(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the model needs ``--allow-experimental`` (``SDK_EXPERIMENTAL_MODELS`` adds more ids)."""
    base = base_model_of(name)
    if base is None:
        return False
    env = os.environ if environ is None else environ
    extra = {item.strip().lower() for item in env.get("SDK_EXPERIMENTAL_MODELS", "").split(",") if item.strip()}
    return base in EXPERIMENTAL_MODELS or base.lower() in extra


# --- prices ------------------------------------------------------------------------------------

#: USD per million tokens (prompt, completion) for models whose price is published here. None is yet:
#: a model missing from this table has an unknown price, and estimates say "unknown" rather than guess.
PRICES_USD_PER_MILLION_TOKENS: dict[str, tuple[float, float]] = {}


def price_of(model: str | None) -> tuple[float, float] | None:
    """``(prompt, completion)`` USD per million tokens of ``model`` (any casing), or None when unknown."""
    if not isinstance(model, str):
        return None
    lowered = {name.lower(): price for name, price in PRICES_USD_PER_MILLION_TOKENS.items()}
    return lowered.get(model.strip().lower())


# --- GPUs ---------------------------------------------------------------------------------------

#: ``[compute].gpu_type`` values: the GPU types of the Modal cloud the Synth backend rents from
GPU_TYPES: tuple[str, ...] = ("T4", "L4", "A10", "A10G", "L40S", "A100", "A100-40GB", "A100-80GB", "H100",
                              "H200", "B200")
_GPU_LOOKUP = {name.lower(): name for name in GPU_TYPES}


def canonical_gpu_type(name: str) -> str | None:
    """The GPU type ``name`` spells (any casing), or ``None`` when the backend has no such GPU."""
    return _GPU_LOOKUP.get(name.strip().lower()) if isinstance(name, str) else None


# --- prompt-learning providers -------------------------------------------------------------------

PROVIDERS = ("openai", "groq", "google")
_OPENAI = {"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-5", "gpt-5-mini", "gpt-5-nano"}
_GROQ_EXACT = {"llama-3.3-70b", "llama-3.1-8b-instant", "qwen-32b", "qwen3-32b"}
_GROQ_PATTERNS = (re.compile(r"^(openai/)?gpt-oss-\d+b"), re.compile(r"^(llama-3\.3-70b|groq/llama-3\.3-70b)"),
                  re.compile(r"^(qwen.*32b|groq/qwen.*32b)"))
_GOOGLE = {"gemini-2.5-pro", "gemini-2.5-pro-gt200k", "gemini-2.5-flash", "gemini-2.5-flash-lite"}


def _strip_prefix(model: str) -> str:
    return model.split("/", 1)[1] if "/" in model else model


def check_provider_model(provider: str, model: str, *, allow_nano: bool = True) -> str | None:
    """Return why ``model`` is not allowed for ``provider`` (``None`` when it is allowed).

    ``allow_nano=False`` is the rule for proposer / mutation / meta models.
    """
    lowered = model.strip().lower()
    bare = _strip_prefix(lowered)
    if bare == "gpt-5-pro":
        return "gpt-5-pro is not supported"
    if not allow_nano and lowered.endswith("-nano"):
        return "nano models cannot be used as proposer / mutation / meta models"
    if provider == "openai":
        ok = bare in _OPENAI
        allowed = ", ".join(sorted(_OPENAI))
    elif provider == "groq":
        ok = bare in _GROQ_EXACT or any(p.match(lowered) for p in _GROQ_PATTERNS)
        allowed = "llama-3.3-70b*, llama-3.1-8b-instant, qwen3-32b, openai/gpt-oss-<N>b"
    elif provider == "google":
        ok = bare in _GOOGLE
        allowed = ", ".join(sorted(_GOOGLE))
    else:
        return f"unsupported provider {shown(provider)} (use one of: {', '.join(PROVIDERS)})"
    if ok:
        return None
    return f"model {shown(model)} is not supported for provider {shown(provider)} (supported: {allowed})"
