"""Prompt-learning flow (GEPA / MIPRO): ``POST /prompt-learning/online/jobs`` (auto-starts)."""

from __future__ import annotations

from synth_nb.flows._base import FlowEndpoints

NAME = "prompt_learning"

ENDPOINTS = FlowEndpoints(
    create="/prompt-learning/online/jobs",
    status="/prompt-learning/online/jobs/{job_id}",
    events="/prompt-learning/online/jobs/{job_id}/events",
    metrics="/prompt-learning/online/jobs/{job_id}/metrics",
    cancel="/prompt-learning/online/jobs/{job_id}/cancel",
    fallback_events=("/learning/jobs/{job_id}/events", "/orchestration/jobs/{job_id}/events"),
    fallback_status=("/learning/jobs/{job_id}", "/orchestration/jobs/{job_id}"),
    events_stream="/prompt-learning/online/jobs/{job_id}/events/stream",
)
