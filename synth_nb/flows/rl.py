"""RL flow: task-app verification, then ``POST /rl/jobs`` (auto-starts)."""

from __future__ import annotations

from synth_nb.flows._base import FlowEndpoints

NAME = "rl"

ENDPOINTS = FlowEndpoints(
    create="/rl/jobs",
    status="/rl/jobs/{job_id}",
    events="/rl/jobs/{job_id}/events",
    metrics="/rl/jobs/{job_id}/metrics",
    cancel="/rl/jobs/{job_id}/cancel",
    fallback_events=("/learning/jobs/{job_id}/events", "/orchestration/jobs/{job_id}/events"),
    fallback_status=("/learning/jobs/{job_id}", "/orchestration/jobs/{job_id}"),
    events_stream="/rl/jobs/{job_id}/events/stream",
    timeline="/rl/jobs/{job_id}/timeline",
)
