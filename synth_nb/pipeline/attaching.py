"""Where a job lives and the keys to talk to it (``attachment``), and ``cancel``: the part of the attach action
``synth-nb cancel`` needs, apart from ``synth_nb.pipeline.actions`` (which imports every action's sequence:
configs, bundles, pre-flight) so a cancel does not pay for them (``benchmarks/cli_start.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from synth_nb.client import AsyncSynthClient
from synth_nb.errors import ConfigError
from synth_nb.flows import flow_named_in, get_flow, guess_flow
from synth_nb.job.cancelling import cancel_by_id
from synth_nb.job.registry import JobRegistry
from synth_nb.pipeline.clients import attach_target

if TYPE_CHECKING:
    from synth_nb.pipeline.prepare import Say
    from synth_nb.pipeline.request import Request
    from synth_nb.pipeline.target import Target

__all__ = ["Attachment", "attachment", "cancel"]


@dataclass
class Attachment:
    """Where a job lives and the keys to talk to it with."""

    job_id: str
    target: Target
    key: str
    #: every key resolved here, masked in what the job holds and prints
    hidden: list[str]
    flow: str | None
    registry: JobRegistry


def attachment(request: Request, job_id: str | None = None, *, start_local: bool = True, say: Say = print
               ) -> Attachment:
    """``--attach`` / ``attach`` / ``cancel``: ``--backend``, else the backend the registry says, else the default."""
    job_id = job_id or request.attach or ""
    registry = JobRegistry(request.folder)
    target = attach_target(job_id, request.backend, registry, start_local=start_local, say=say)
    if not target.started:
        raise ConfigError("re-attaching needs the URL of a running backend, not 'local'", key="backend",
                          hint="start one with `synth-nb backend` and pass --backend URL")
    sources = request.sources()
    key = sources.api_key(target)
    hidden = [key, *(s.get_secret_value() for s in sources.resolve(target).values())]
    return Attachment(job_id, target, key, [h for h in hidden if h], request.flow, registry)


async def cancel(found: Attachment, *, timeout: float = 30.0) -> str:
    """Ask the backend to cancel the job and wait, within ``timeout`` s, for it to say so: the job's status then.

    The job is found by a status read under its flow's endpoints (the registry's or ``--flow``'s first), the
    cancel sent at once and confirmed by status reads: its event history is never read (``cancel_by_id``).
    """
    record = found.registry.get(found.job_id)
    names = [found.flow] if found.flow else guess_flow(found.job_id)
    flows = {name: get_flow(name).endpoints for name in names}
    client = AsyncSynthClient(found.target.url, found.key)
    try:
        return await cancel_by_id(found.job_id, client, flows, kind_of=flow_named_in,
                                  first=record.flow if record is not None else None, timeout=timeout)
    finally:
        await client.aclose()
