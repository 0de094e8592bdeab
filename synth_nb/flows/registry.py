"""The registered flows, in the order configs are offered to them.

The built-in flows are listed as ``"module:attribute"`` data and imported on first use, so importing the
registry stays cheap and no flow module has to import it. ``register`` adds another flow after them. Each line
also names the flow's ``FlowJobs`` (its endpoints, id prefix and kind words): finding a job by id
(``flow_jobs``, ``guess_flow``, ``flow_named_in``) imports those small modules, not the flows.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from synth_nb.errors import ConfigError
from synth_nb.flows.override_rows import CORE_ROWS, OverrideRow

if TYPE_CHECKING:
    from synth_nb.contract import FlowJobs
    from synth_nb.flows.base import Flow

__all__ = ["all_flows", "flow_jobs", "flow_named_in", "flow_names", "get_flow", "guess_flow", "jobs_of",
           "override_rows", "register", "registered", "unregister"]


class BuiltIn(NamedTuple):
    """Where a built-in flow is (``"module:attribute"``), and where its ``FlowJobs`` are."""

    flow: str
    jobs: str


#: name -> where the flow is, asked in this order whether they claim a TOML (prompt learning's table wins, then
#: RL's keys, then SFT's); the names are here so ``flow_names`` (``--flow``'s choices) imports no flow
BUILT_IN = {
    "prompt_learning": BuiltIn("synth_nb.flows.prompt_learning.flow:FLOW", "synth_nb.flows.prompt_learning.jobs:JOBS"),
    "rl": BuiltIn("synth_nb.flows.rl.flow:FLOW", "synth_nb.flows.rl.jobs:JOBS"),
    "sft": BuiltIn("synth_nb.flows.sft.flow:FLOW", "synth_nb.flows.sft.jobs:JOBS"),
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
        flow = _named(entry.flow)
        if not isinstance(flow, Flow) or flow.name != name:
            raise TypeError(f"{entry.flow} is not a Flow named {name!r}")
        _flows[flow.name] = flow
    _flows.update(extra)


def _named(entry: str) -> Any:
    module, _, attribute = entry.partition(":")
    return getattr(importlib.import_module(module), attribute)


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
        raise _unknown(name) from None


def all_flows() -> tuple[Flow, ...]:
    """Every registered flow, in the order they are asked whether they claim a config."""
    _load_built_in()
    return tuple(_flows.values())


def flow_names() -> tuple[str, ...]:
    """Every registered flow's name, in order; before any flow is asked for, the built-in names without
    importing them (``register`` loads the built-in flows first, so nothing else is registered yet)."""
    return tuple(_flows) if _loaded else tuple(BUILT_IN)


def flow_jobs() -> tuple[FlowJobs, ...]:
    """How every registered flow's jobs are found on a backend, in order; before any flow is asked for, the
    built-in flows' ``jobs`` modules alone (no flow imported: ``synth-nb cancel``)."""
    # imported here, as the flows are: parsing ``--flow`` (``synth-nb cancel --help``) needs the names alone
    from synth_nb.contract import FlowJobs

    if not _loaded:
        jobs = [_named(entry.jobs) for entry in BUILT_IN.values()]
        if any(not isinstance(one, FlowJobs) or one.name != name for one, name in zip(jobs, BUILT_IN, strict=True)):
            raise TypeError("a built-in flow's jobs entry is not the FlowJobs of its name")
        return tuple(jobs)
    return tuple(FlowJobs(flow.name, flow.endpoints, flow.id_prefix, flow.kind_words) for flow in _flows.values())


def jobs_of(name: str) -> FlowJobs:
    """How the jobs of the flow registered as ``name`` are found; an unknown name is a ``ConfigError`` listing
    the known ones, as ``get_flow`` says it."""
    for jobs in flow_jobs():
        if jobs.name == name:
            return jobs
    raise _unknown(name)


def _unknown(name: str) -> ConfigError:
    return ConfigError(f"unknown flow {name!r}; expected one of {', '.join(flow_names())}", key="flow")


def guess_flow(job_id: str) -> list[str]:
    """Flows a bare job id may be of, most likely first: those whose ``id_prefix`` starts it, then those
    without a prefix, then those whose prefix does not match."""

    def rank(jobs: FlowJobs) -> int:
        if jobs.id_prefix is None:
            return 1
        return 0 if job_id.startswith(jobs.id_prefix) else 2

    return [jobs.name for jobs in sorted(flow_jobs(), key=rank)]


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
        for jobs in flow_jobs():
            if word in jobs.kind_words:
                return jobs.name
    return None


def override_rows() -> tuple[OverrideRow, ...]:
    """The override table: the rows every flow is asked about, then each registered flow's own rows."""
    rows = {row.name: row for row in CORE_ROWS}
    for flow in all_flows():
        for row in flow.override_rows:
            rows.setdefault(row.name, row)
    return tuple(rows.values())
