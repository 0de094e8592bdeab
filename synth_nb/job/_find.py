"""Find a job on a backend by id: which flow's paths answer for it, and what its status document says it is."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from synth_nb.client import AsyncSynthClient
from synth_nb.contract import FlowEndpoints
from synth_nb.errors import ConfigError, NotFoundError
from synth_nb.untrusted import job_id_problem, shown_id

__all__ = ["find_job", "linked_job_id"]


async def find_job(job_id: str, client: AsyncSynthClient, flows: Mapping[str, FlowEndpoints], *,
                   kind_of: Callable[[dict[str, Any]], str | None] | None = None,
                   first: str | None = None) -> tuple[str, dict[str, Any]]:
    """The flow ``job_id`` belongs to and its status document.

    ``flows`` are tried in order (``first`` before the others), each one's status paths fallbacks included;
    the job is then named by what its status document says (``kind_of``) when that is one of ``flows``,
    else by the flow whose paths answered: ``/learning/jobs/{id}`` answers for SFT, RL and prompt learning.
    """
    problem = job_id_problem(job_id)
    if problem is not None:  # it would become a file name: refused before anything is asked
        raise ConfigError(f"{shown_id(job_id)} is not a job id: {problem}", key="JOB_ID")
    candidates: Sequence[str] = sorted(flows, key=lambda name: name != first)
    for name in candidates:
        try:
            doc = await client.get_status(flows[name], job_id)
        except NotFoundError:
            continue
        named = kind_of(doc) if kind_of is not None else None
        return (named if named is not None and named in flows else name), doc
    raise NotFoundError(
        f"job {job_id} was not found on {client.shown_url} (tried the {', '.join(candidates)} endpoints "
        "and their fallbacks); check the id and --backend", status_code=404, method="GET", url=client.shown_url,
    )


def linked_job_id(doc: Mapping[str, Any], own_id: str) -> str | None:
    """The job a status document names as linked (``linked_job_id``: an RL job's training job), if any."""
    linked = doc.get("linked_job_id")
    return linked if isinstance(linked, str) and linked.strip() and linked != own_id else None
