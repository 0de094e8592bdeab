"""``follow``: plain (blocking) code re-attaches to a job through a ``SynthClient`` and waits for its end."""

from __future__ import annotations

from synth_nb.client import SynthClient
from synth_nb.job import follow


def test_follow_blocks_until_the_end_with_full_history(fake_backend) -> None:
    with SynthClient(fake_backend.url, fake_backend.api_key) as client:
        created = client.create_job(fake_backend.endpoints("rl"), {"metadata": {"fake": {"events": 20, "metrics": 5}}})
        job = follow(created["job_id"], client, timeout=30)
    assert job.status == "succeeded" and job.done and job.flow == "rl"
    assert [e.seq for e in job.events] == [e["seq"] for e in fake_backend.job(job.id).events]
    assert len(job.metrics) == len(fake_backend.job(job.id).metrics)
