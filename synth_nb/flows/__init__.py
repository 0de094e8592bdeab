"""Flows are parallel modules of identical shape: ``NAME``, ``ENDPOINTS``, ``build_plan(...)``."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["FLOW_NAMES", "get_flow"]

FLOW_NAMES = ("rl", "sft", "prompt_learning")


def get_flow(name: str) -> ModuleType:
    """Return the flow module for ``name`` (``rl``, ``sft`` or ``prompt_learning``)."""
    if name not in FLOW_NAMES:
        raise KeyError(f"unknown flow {name!r}; expected one of {', '.join(FLOW_NAMES)}")
    return importlib.import_module(f"synth_nb.flows.{name}")
