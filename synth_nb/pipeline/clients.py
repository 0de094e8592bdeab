"""One client per job: a plan submitted over a client of its own (``submit_plan``) and a job rebuilt from its
backend over one (``rebuild_job``), so each job can move on its own (where a job lives: ``target.attach_target``).

A job's client is closed here only when the submission or the rebuild failed; afterwards the client belongs
to the job (``job.client``) and whoever follows the job closes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from pydantic import SecretStr

from synth_nb import job as job_layer
from synth_nb.backend import display_url
from synth_nb.client import AsyncSynthClient
from synth_nb.errors import ConfigError
from synth_nb.flows import flow_named_in, get_flow, guess_flow
from synth_nb.pipeline.target import Target

if TYPE_CHECKING:
    from synth_nb.job import Job, JobRegistry
    from synth_nb.plan import Plan

__all__ = ["rebuild_job", "say_connecting", "secret_values", "submit_plan"]


def _client(target: Target, api_key: str) -> AsyncSynthClient:
    if not target.started:
        raise ConfigError("the embedded backend was not started, so there is nothing to send to",
                          key="backend", hint="pass --backend local without --dry-run, or a backend URL")
    return AsyncSynthClient(target.url, api_key)


async def submit_plan(plan: Plan, target: Target, api_key: str, *, registry: JobRegistry | None = None,
                      poll_interval: float = 5.0) -> Job:
    """Run the plan's requests against ``target`` and return the created job (not yet followed)."""
    client = _client(target, api_key)
    try:
        job = await job_layer.submit(plan, client, registry=registry, poll_interval=poll_interval)
    except BaseException:
        await client.aclose()
        raise
    if registry is not None and target.is_embedded:
        registry.update(job.id, embedded=True)
    return job


async def rebuild_job(job_id: str, target: Target, api_key: str, *, flow: str | None = None,
                      registry: JobRegistry | None = None, poll_interval: float = 5.0,
                      hidden: Sequence[str] = (), timeout: float | None = None) -> Job:
    """Rebuild a job's history (status, events, metrics) from ``target``, within ``timeout``; not yet followed.

    The job is looked for under ``flow``'s endpoints, else under each registered flow's, the likeliest for
    its id first. ``hidden``: the other keys resolved here, masked in what the job holds (as a submitted job
    masks its plan's secrets).
    """
    flows = {name: get_flow(name).endpoints for name in ([flow] if flow else guess_flow(job_id))}
    client = _client(target, api_key)
    try:
        return await job_layer.attach(job_id, client, flows, kind_of=flow_named_in, registry=registry,
                                      poll_interval=poll_interval, hidden=hidden, timeout=timeout)
    except BaseException:
        await client.aclose()
        raise


def say_connecting(target: Target, say: Callable[[str], None]) -> None:
    """``connecting to URL …`` before the first request to a backend that is not the embedded one: while a
    refused connection is retried (about 2 s, ``synth_nb.client._retry``) the user knows what is tried."""
    if not target.is_embedded:
        say(f"connecting to {display_url(target.url)} …")


def secret_values(api_key: str, plans: Iterable[Plan]) -> list[str]:
    """Every secret a submission can echo back (the API key, each plan's secrets), for masking output."""
    values = [api_key] + [s.get_secret_value() if isinstance(s, SecretStr) else str(s)
                          for plan in plans for s in plan.secrets]
    return [v for v in values if v]
