"""Find a job on a backend by id: which flow's paths answer for it, and what its status document says it is."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from synth_nb.contract import FlowEndpoints
from synth_nb.errors import ConfigError, NotFoundError
from synth_nb.untrusted import job_id_problem, shown_id

if TYPE_CHECKING:
    from synth_nb.client import AsyncSynthClient, PlainClient

__all__ = ["find_job", "find_job_blocking", "linked_job_id"]

KindOf = Callable[[dict[str, Any]], str | None]


async def find_job(job_id: str, client: AsyncSynthClient, flows: Mapping[str, FlowEndpoints], *,
                   kind_of: KindOf | None = None, first: str | None = None) -> tuple[str, dict[str, Any]]:
    """The flow ``job_id`` belongs to and its status document.

    ``flows`` are tried in order (``first`` before the others), each one's status paths fallbacks included;
    the job is then named by what its status document says (``kind_of``) when that is one of ``flows``,
    else by the flow whose paths answered: ``/learning/jobs/{id}`` answers for SFT, RL and prompt learning.
    """
    candidates = _candidates(job_id, flows, first)
    for name in candidates:
        try:
            doc = await client.get_status(flows[name], job_id)
        except NotFoundError:
            continue
        return _named(name, doc, flows, kind_of), doc
    raise _not_found(job_id, candidates, client.shown_url)


def find_job_blocking(job_id: str, client: PlainClient, flows: Mapping[str, FlowEndpoints], *,
                      kind_of: KindOf | None = None, first: str | None = None) -> tuple[str, dict[str, Any]]:
    """``find_job`` over the blocking client (``synth-nb cancel``): the same order, naming and errors."""
    candidates = _candidates(job_id, flows, first)
    for name in candidates:
        try:
            doc = client.get_status(flows[name], job_id)
        except NotFoundError:
            continue
        return _named(name, doc, flows, kind_of), doc
    raise _not_found(job_id, candidates, client.shown_url)


def _candidates(job_id: str, flows: Mapping[str, FlowEndpoints], first: str | None) -> Sequence[str]:
    problem = job_id_problem(job_id)
    if problem is not None:  # it would become a file name: refused before anything is asked
        raise ConfigError(f"{shown_id(job_id)} is not a job id: {problem}", key="JOB_ID")
    return sorted(flows, key=lambda name: name != first)


def _named(name: str, doc: dict[str, Any], flows: Mapping[str, FlowEndpoints], kind_of: KindOf | None) -> str:
    named = kind_of(doc) if kind_of is not None else None
    return named if named is not None and named in flows else name


def _not_found(job_id: str, candidates: Sequence[str], shown_url: str) -> NotFoundError:
    return NotFoundError(
        f"job {job_id} was not found on {shown_url} (tried the {', '.join(candidates)} endpoints "
        "and their fallbacks); check the id and --backend", status_code=404, method="GET", url=shown_url,
    )


def linked_job_id(doc: Mapping[str, Any], own_id: str) -> str | None:
    """The job a status document names as linked (``linked_job_id``: an RL job's training job), if any."""
    linked = doc.get("linked_job_id")
    return linked if isinstance(linked, str) and linked.strip() and linked != own_id else None
