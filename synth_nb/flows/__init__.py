"""Flows: one object per kind of training job (``Flow``), found by name in a registry.

``plan_for(config, overrides, secrets)`` builds the submission plan of a loaded config through its flow.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from synth_nb._lazy import exports
from synth_nb.flows.registry import (
    all_flows,
    flow_named_in,
    flow_names,
    get_flow,
    guess_flow,
    override_rows,
    register,
    registered,
    unregister,
)

if TYPE_CHECKING:
    from synth_nb.flows.base import Flow
    from synth_nb.plan import Plan

#: ``Flow`` is imported on first use (``synth_nb._lazy``): the registry answers flow names without importing
#: any flow, so a command that only parses ``--flow`` (``synth-nb cancel``) does not pay for them
__getattr__ = exports(__name__, {"Flow": "synth_nb.flows.base"})

__all__ = ["Flow", "all_flows", "flow_named_in", "flow_names", "get_flow", "guess_flow", "is_noise", "override_rows",
           "plan_for", "register", "registered", "unregister", "with_own_overrides"]


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
    flow = get_flow(config.flow)
    patched, warnings = with_own_overrides(config, flow, overrides)
    plan = flow.build_plan(patched, overrides, secrets)
    plan.warnings.extend(warnings)
    return plan


def with_own_overrides(config: Any, flow: Flow, overrides: Any) -> tuple[Any, list[str]]:
    """``config`` with the values of the flow's own override rows written at their config keys (a copy), and
    a warning per value that found no key."""
    from synth_nb.flows.overrides import apply_flow_values

    rows = [row for row in flow.override_rows if row.keys and overrides.flow_values.get(row.name) is not None]
    if not rows:
        return config, []
    patched = copy.copy(config)
    patched.raw, warnings = apply_flow_values(config.raw, rows, overrides.flow_values)
    return patched, warnings


def is_noise(flow: str, event: Any) -> bool:
    """True for an event of a ``flow`` job hidden by default (``get_flow(flow).is_noise(event)``)."""
    return get_flow(flow).is_noise(event)
