"""Flows are parallel modules of identical shape: ``NAME``, ``ENDPOINTS``, ``build_plan(...)``, ``is_noise``.

``plan_for(config, overrides, secrets)`` picks the module from ``config.flow``.
"""

from __future__ import annotations

import importlib
import json
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from synth_nb.plan import Plan

__all__ = ["FLOW_NAMES", "get_flow", "is_noise", "plan_for"]

FLOW_NAMES = ("rl", "sft", "prompt_learning")


def get_flow(name: str) -> ModuleType:
    """Return the flow module for ``name`` (``rl``, ``sft`` or ``prompt_learning``)."""
    if name not in FLOW_NAMES:
        raise KeyError(f"unknown flow {name!r}; expected one of {', '.join(FLOW_NAMES)}")
    return importlib.import_module(f"synth_nb.flows.{name}")


def plan_for(config: Any, overrides: Any = None, secrets: Any = None) -> Plan:
    """Build the submission plan for a loaded config (``synth_nb.config.LoadedConfig``).

    ``overrides`` defaults to no overrides; ``secrets`` defaults to ``resolve_secrets`` for the config's
    flow (required keys are then enforced: ``SecretsError`` if one is missing).
    """
    from synth_nb.flows.overrides import Overrides
    from synth_nb.secrets import resolve_secrets

    if overrides is None:
        overrides = Overrides()
    if secrets is None:
        secrets = resolve_secrets(config.flow, config_path=config.path,
                                  local_backend=overrides.backend == "local").require()
    plan: Plan = get_flow(config.flow).build_plan(config, overrides, secrets)
    return plan


def is_noise(flow: str, event: Any) -> bool:
    """True for an event hidden by default (as 0.2.24's CLI does); errors are never hidden.

    ``event`` is anything with ``type``, ``message``, ``level`` and ``data`` (an ``Event`` record).
    """
    etype = getattr(event, "type", "") or ""
    if (getattr(event, "level", "") or "").lower() == "error" or etype.endswith(".failed"):
        return False
    if etype.endswith((".worker.alive", ".heartbeat")):
        return True
    if flow not in FLOW_NAMES:
        return False
    text = f"{getattr(event, 'message', '')} {json.dumps(getattr(event, 'data', None) or {}, default=str)}"
    return bool(get_flow(flow).is_noise(etype, text.lower()))
