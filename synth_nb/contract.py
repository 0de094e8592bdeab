"""The backend contract as data: the paths a flow's jobs live under.

Shared by ``flows`` (which declare them) and ``client`` (which calls them), so the client never imports a
flow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["FlowEndpoints", "FlowJobs"]


@dataclass(frozen=True)
class FlowEndpoints:
    """Backend paths (relative to a base URL ending in ``/api``); ``{job_id}`` is filled in."""

    create: str
    status: str
    events: str
    metrics: str
    cancel: str
    #: event paths 0.2.24 also polls (may 404); events are deduplicated by seq across them
    fallback_events: tuple[str, ...] = field(default_factory=tuple)
    #: status paths to try when ``status`` 404s
    fallback_status: tuple[str, ...] = field(default_factory=tuple)
    #: metric paths to try when ``metrics`` 404s
    fallback_metrics: tuple[str, ...] = field(default_factory=tuple)
    #: Server-Sent Events stream, when the backend offers one
    events_stream: str | None = None
    #: POST that starts a job created stopped (SFT); None when jobs start on creation
    start: str | None = None
    #: the job's phases (``{"phase", "created_at", "message"?}`` entries), when the backend keeps them
    timeline: str | None = None
    #: timeline paths to try when ``timeline`` 404s
    fallback_timeline: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def of_jobs(cls, jobs: str, *, start: bool = False, also_under: tuple[str, ...] = (),
                metrics_also_under: tuple[str, ...] = (), timeline: bool = False,
                timeline_also_under: tuple[str, ...] = ()) -> FlowEndpoints:
        """The paths of a job collection such as ``/rl/jobs``: ``{jobs}/{job_id}`` and its ``/events``,
        ``/metrics``, ``/cancel``, ``/events/stream`` (and ``/start`` with ``start``, ``/timeline`` with
        ``timeline``); ``also_under``: other collections whose status and events paths are polled too
        (``metrics_also_under``: metrics paths; ``timeline_also_under``: timeline paths)."""
        job = jobs + "/{job_id}"
        return cls(create=jobs, status=job, events=job + "/events", metrics=job + "/metrics",
                   cancel=job + "/cancel", events_stream=job + "/events/stream",
                   start=job + "/start" if start else None,
                   fallback_events=tuple(f"{other}/{{job_id}}/events" for other in also_under),
                   fallback_status=tuple(f"{other}/{{job_id}}" for other in also_under),
                   fallback_metrics=tuple(f"{other}/{{job_id}}/metrics" for other in metrics_also_under),
                   timeline=job + "/timeline" if timeline else None,
                   fallback_timeline=tuple(f"{other}/{{job_id}}/timeline" for other in timeline_also_under))


@dataclass(frozen=True)
class FlowJobs:
    """How a flow's jobs are found on a backend: its paths, the prefix of its job ids and the words a status
    document may call its jobs. A flow's own data (each flow's ``jobs`` module, read by its ``Flow``), apart
    from the flow so that finding or cancelling a job by id imports no flow (``synth_nb.flows.registry``)."""

    name: str
    endpoints: FlowEndpoints
    #: job ids of this flow start with it (used to guess the flow of a bare job id)
    id_prefix: str | None = None
    #: what a backend's status document may call this flow's jobs (``job_type``, ``type``, ``algorithm``, ...)
    kind_words: frozenset[str] = frozenset()
