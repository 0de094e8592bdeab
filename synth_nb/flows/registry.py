"""The registered flows, in the order configs are offered to them.

The built-in flows are listed as ``"module:attribute"`` data and imported on first use, so importing the
registry stays cheap and no flow module has to import it. ``register`` adds another flow after them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from synth_nb.errors import ConfigError
from synth_nb.flows.override_rows import CORE_ROWS, OverrideRow

if TYPE_CHECKING:
    from synth_nb.flows.base import Flow

__all__ = ["all_flows", "flow_named_in", "flow_names", "get_flow", "guess_flow", "override_rows", "register",
           "registered", "unregister"]

#: name -> where the flow is, asked in this order whether they claim a TOML (prompt learning's table wins, then
#: RL's keys, then SFT's); the names are here so ``flow_names`` (``--flow``'s choices) imports no flow
BUILT_IN = {
    "prompt_learning": "synth_nb.flows.prompt_learning:FLOW",
    "rl": "synth_nb.flows.rl:FLOW",
    "sft": "synth_nb.flows.sft:FLOW",
}

_flows: dict[str, Flow] = {}
_loaded = False


def _load_built_in() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    from synth_nb.flows.base import Flow

    extra = dict(_flows)
    _flows.clear()
    for name, entry in BUILT_IN.items():
        module, _, attribute = entry.partition(":")
        flow = getattr(importlib.import_module(module), attribute)
        if not isinstance(flow, Flow) or flow.name != name:
            raise TypeError(f"{entry} is not a Flow named {name!r}")
        _flows[flow.name] = flow
    _flows.update(extra)


def register(flow: Flow) -> Flow:
    """Add ``flow`` (after the built-in ones); a name already taken is a ``ConfigError``."""
    from synth_nb.flows.base import Flow

    if not isinstance(flow, Flow):
        raise TypeError(f"register() takes a Flow instance, got {type(flow).__name__}")
    _load_built_in()
    if flow.name in _flows:
        raise ConfigError(f"a flow named {flow.name!r} is already registered")
    _flows[flow.name] = flow
    return flow


def unregister(name: str) -> None:
    """Remove the flow registered as ``name`` (nothing happens if there is none)."""
    _load_built_in()
    _flows.pop(name, None)


@contextmanager
def registered(flow: Flow) -> Iterator[Flow]:
    """``with registered(flow):`` the flow is known inside the block only."""
    register(flow)
    try:
        yield flow
    finally:
        unregister(flow.name)


def get_flow(name: str) -> Flow:
    """The flow registered as ``name``; an unknown name is a ``ConfigError`` listing the known ones."""
    _load_built_in()
    try:
        return _flows[name]
    except KeyError:
        raise ConfigError(f"unknown flow {name!r}; expected one of {', '.join(_flows)}", key="flow") from None


def all_flows() -> tuple[Flow, ...]:
    """Every registered flow, in the order they are asked whether they claim a config."""
    _load_built_in()
    return tuple(_flows.values())


def flow_names() -> tuple[str, ...]:
    """Every registered flow's name, in order; before any flow is asked for, the built-in names without
    importing them (``register`` loads the built-in flows first, so nothing else is registered yet)."""
    return tuple(_flows) if _loaded else tuple(BUILT_IN)


def guess_flow(job_id: str) -> list[str]:
    """Flows a bare job id may be of, most likely first: those whose ``id_prefix`` starts it, then those
    without a prefix, then those whose prefix does not match."""

    def rank(flow: Flow) -> int:
        if flow.id_prefix is None:
            return 1
        return 0 if job_id.startswith(flow.id_prefix) else 2

    return [flow.name for flow in sorted(all_flows(), key=rank)]


#: the fields of a status document that may name its job's kind
_KIND_FIELDS = ("job_type", "training_type", "flow", "kind", "type", "algorithm")


def flow_named_in(doc: dict[str, Any]) -> str | None:
    """The flow a status document says its job belongs to (``job_type: "rl"``, ``algorithm: "gepa"``, ...).

    The path that answered says little: 0.2.24 falls back to ``/learning/jobs/{id}`` for RL and prompt
    learning alike, and that is SFT's own path.
    """
    for key in _KIND_FIELDS:
        value = doc.get(key)
        if not isinstance(value, str):
            continue
        word = value.strip().lower()
        for flow in all_flows():
            if word in flow.kind_words:
                return flow.name
    return None


def override_rows() -> tuple[OverrideRow, ...]:
    """The override table: the rows every flow is asked about, then each registered flow's own rows."""
    rows = {row.name: row for row in CORE_ROWS}
    for flow in all_flows():
        for row in flow.override_rows:
            rows.setdefault(row.name, row)
    return tuple(rows.values())
