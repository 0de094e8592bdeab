"""SynthClient: the blocking facade works from plain code (no running loop)."""

from __future__ import annotations

import pytest

from synth_nb.client import SynthClient
from synth_nb.errors import NotFoundError


def test_sync_client_round_trip(fake_backend) -> None:
    rl = fake_backend.endpoints("rl")
    with SynthClient(fake_backend.url, fake_backend.api_key) as client:
        created = client.create_job(rl, {"metadata": {"fake": {"events": 2}}})
        job_id = created["job_id"]
        assert client.get_status(rl, job_id)["job_id"] == job_id
        assert client.get_events(rl, job_id)[0].type == "rl.created"
        assert client.cancel(rl, job_id)["message"]
        with pytest.raises(NotFoundError):
            client.get_status(rl, "job_missing")
        assert fake_backend.api_key not in repr(client)
