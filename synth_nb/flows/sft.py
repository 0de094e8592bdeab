"""SFT flow: dataset check, upload(s), ``POST /learning/jobs``, then ``/start``."""

from __future__ import annotations

from synth_nb.flows._base import FlowEndpoints

NAME = "sft"

ENDPOINTS = FlowEndpoints(
    create="/learning/jobs",
    start="/learning/jobs/{job_id}/start",
    status="/learning/jobs/{job_id}",
    events="/learning/jobs/{job_id}/events",
    metrics="/learning/jobs/{job_id}/metrics",
    cancel="/learning/jobs/{job_id}/cancel",
    events_stream="/learning/jobs/{job_id}/events/stream",
    timeline="/learning/jobs/{job_id}/timeline",
)
