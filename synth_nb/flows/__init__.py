"""Flows: one object per kind of training job (``Flow``), found by name in a registry.

``plan_for(config, overrides, secrets)`` builds the submission plan of a loaded config through its flow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from synth_nb.flows.base import Flow
from synth_nb.flows.registry import (
    all_flows,
    flow_named_in,
    flow_names,
    get_flow,
    guess_flow,
    register,
    registered,
    unregister,
)

if TYPE_CHECKING:
    from synth_nb.plan import Plan

__all__ = ["Flow", "all_flows", "flow_named_in", "flow_names", "get_flow", "guess_flow", "is_noise", "plan_for", "register",
           "registered", "unregister"]


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
        from synth_nb.backend import is_local

        keys = get_flow(config.flow).required_secrets
        if is_local(overrides.backend):  # the embedded backend brings its own SYNTH_API_KEY
            keys = tuple(k for k in keys if k != "SYNTH_API_KEY")
        secrets = resolve_secrets(config_path=config.path).require(keys)
    return get_flow(config.flow).build_plan(config, overrides, secrets)


def is_noise(flow: str, event: Any) -> bool:
    """True for an event of a ``flow`` job hidden by default (``get_flow(flow).is_noise(event)``)."""
    return get_flow(flow).is_noise(event)
