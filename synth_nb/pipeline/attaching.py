"""Where a job lives and the keys to talk to it (``attachment``), and ``cancel``: the part of the attach action
``synth-nb cancel`` needs, apart from ``synth_nb.pipeline.actions`` (which imports every action's sequence:
configs, bundles, pre-flight) so a cancel does not pay for them (``benchmarks/cli_start.py``).

``synth-nb cancel`` itself runs ``cancel_attachment`` and ``cancel_job``: the same target, keys and requests
without a ``Request`` (every ``train`` flag and the config loader), pydantic, a flow, httpx or asyncio.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from synth_nb.client.plain import PlainClient
from synth_nb.errors import ConfigError
from synth_nb.flows.registry import flow_named_in, guess_flow, jobs_of
from synth_nb.job.cancelling import cancel_by_id_blocking
from synth_nb.job.registry import JobRegistry
from synth_nb.pipeline.target import Target, attach_target
from synth_nb.secrets import (
    ENVIRONMENT_API_KEY,
    SYNTH_API_KEY,
    missing_keys_error,
    secret_parts,
    secret_values,
)

if TYPE_CHECKING:
    from synth_nb.contract import FlowEndpoints
    from synth_nb.pipeline.prepare import Say
    from synth_nb.pipeline.request import Request

__all__ = ["Attachment", "attachment", "cancel", "cancel_attachment", "cancel_job"]


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
    target = _started(attach_target(job_id, request.backend, registry, start_local=start_local, say=say))
    sources = request.sources()
    key = sources.api_key(target)
    hidden = [key, *(s.get_secret_value() for s in sources.resolve(target).values())]
    return Attachment(job_id, target, key, [h for h in hidden if h], request.flow, registry)


def cancel_attachment(job_id: str, *, backend: str | None, flow: str | None, folder: Path,
                      env_files: Sequence[str | Path] = (), modal_secrets: Sequence[str] = (), say: Say = print
                      ) -> Attachment:
    """``attachment`` for ``synth-nb cancel``, from its flags: the same target (never starting the embedded
    backend), and its keys from the same sources in the same precedence (``--env-file``, ``--modal-secret``, the
    environment, the nearest ``.env``) with ``SecretSources.resolve``'s rule for the embedded backend's own keys."""
    registry = JobRegistry(folder)
    target = _started(attach_target(job_id, backend, registry, start_local=False, say=say))
    values = secret_values(env_files=env_files, modal_secrets=modal_secrets, cwd=folder)
    if target.own_key:
        values[SYNTH_API_KEY] = target.own_key
    if target.task_app_key and not values.get(ENVIRONMENT_API_KEY):
        values[ENVIRONMENT_API_KEY] = target.task_app_key
    key = values.get(SYNTH_API_KEY)
    if not key:
        raise missing_keys_error([SYNTH_API_KEY])
    hidden = [key, *(part for value in values.values() for part in secret_parts(value))]
    return Attachment(job_id, target, key, hidden, flow, registry)


def _started(target: Target) -> Target:
    if not target.started:
        raise ConfigError("re-attaching needs the URL of a running backend, not 'local'", key="backend",
                          hint="start one with `synth-nb backend` and pass --backend URL")
    return target


def _looked_for(found: Attachment) -> tuple[dict[str, FlowEndpoints], str | None]:
    """The flows the job is looked for under (``--flow``'s, else every flow, the likeliest for its id first)
    with their endpoints, and the one its registry record names."""
    record = found.registry.get(found.job_id)
    names = [found.flow] if found.flow else guess_flow(found.job_id)
    return {name: jobs_of(name).endpoints for name in names}, record.flow if record is not None else None


async def cancel(found: Attachment, *, timeout: float = 30.0) -> str:
    """Ask the backend to cancel the job and wait, within ``timeout`` s, for it to say so: the job's status then.

    The job is found by a status read under its flow's endpoints (the registry's or ``--flow``'s first), the
    cancel sent at once and confirmed by status reads: its event history is never read (``cancel_by_id``).
    """
    from synth_nb.client import AsyncSynthClient  # why here: ``cancel_job`` mostly needs no httpx
    from synth_nb.job.cancelling import cancel_by_id

    flows, first = _looked_for(found)
    client = AsyncSynthClient(found.target.url, found.key)
    try:
        return await cancel_by_id(found.job_id, client, flows, kind_of=flow_named_in, first=first, timeout=timeout)
    finally:
        await client.aclose()


def cancel_job(found: Attachment, *, timeout: float = 30.0) -> str:
    """``cancel`` for a command that does nothing else: the same requests over the blocking ``PlainClient``
    (no httpx or asyncio to import); through ``AsyncSynthClient`` when the environment names a proxy for the
    backend (``PlainClient.serves``)."""
    if not PlainClient.serves(found.target.url):
        import asyncio

        return asyncio.run(cancel(found, timeout=timeout))
    flows, first = _looked_for(found)
    client = PlainClient(found.target.url, found.key)
    return cancel_by_id_blocking(found.job_id, client, flows, kind_of=flow_named_in, first=first, timeout=timeout)
