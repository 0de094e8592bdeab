"""The CLI against a real local backend through a proxy that drops, delays, truncates and resets connections
and goes away for a while: no event lost or duplicated, one job per submission, and the outage is said.

The CLI runs in this process (``run_submit``, what ``synth-nb train`` calls after planning) with ``--record``,
so what it saw can be compared with what the backend holds.
"""

from __future__ import annotations

import asyncio
import io
import re
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from fault_proxy import fault_proxy

from synth_nb.backend import normalize_backend_url
from synth_nb.cli.follow import run_submit
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import read_recording
from synth_nb.pipeline import Target
from synth_nb.pipeline.actions import Batch
from synth_nb.pipeline.request import Request
from synth_nb.plan import Plan, Step

ENDPOINTS = get_flow("prompt_learning").endpoints


def _plan(speed: float) -> Plan:
    body = {"algorithm": "gepa", "metadata": {"local_executor": "replay", "recording": "gepa", "replay_speed": speed}}
    return Plan(flow="prompt_learning", endpoints=get_flow("prompt_learning").endpoints,
                algorithm="gepa", steps=[Step("POST", ENDPOINTS.create, body)])


async def _backend_view(url: str, key: str) -> tuple[list[str], list[int]]:
    """Every job id the backend has, and the seqs of the first one's events (read directly, no proxy)."""
    async with AsyncSynthClient(url, key) as client:
        jobs = await client.list_jobs(ENDPOINTS, limit=100)
        ids = [str(j.get("job_id") or j.get("id")) for j in jobs]
        events = await client.get_events(ENDPOINTS, ids[0], limit=10_000) if ids else []
    return ids, [e.seq for e in events]


class _Stderr(io.StringIO):
    """stderr the outage thread can read while the CLI writes it."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            return super().write(text)

    def text(self) -> str:
        with self._lock:
            return self.getvalue()


def _outage_when_running(backend_url: str, key: str, proxy: object, seconds: float, done: threading.Event,
                         err: _Stderr) -> None:
    """Once the job has produced a few events, take the proxy away for ``seconds`` and until the CLI has
    said so (a client asleep in a retry backoff can sleep through a short outage without seeing it)."""
    with httpx.Client(base_url=backend_url + "/api", headers={"Authorization": f"Bearer {key}"}) as http:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not done.is_set():
            listing = http.get(ENDPOINTS.create).json()
            jobs = listing if isinstance(listing, list) else listing.get("jobs") or []
            if jobs:
                job_id = jobs[0].get("job_id") or jobs[0].get("id")
                events = http.get(ENDPOINTS.events.replace("{job_id}", job_id), params={"limit": 1000}).json()
                if len(events if isinstance(events, list) else events.get("events") or []) >= 5:
                    proxy.outage(seconds, until=lambda: "backend unreachable since" in err.text())  # type: ignore[attr-defined]
                    return
            time.sleep(0.1)


@pytest.mark.parametrize("seed", [3, 11])
def test_faults_and_an_outage_lose_nothing_and_create_one_job(seed: int, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from synth_nb.local import start_backend

    monkeypatch.chdir(tmp_path)
    stderr = _Stderr()
    monkeypatch.setattr("sys.stderr", stderr)
    record = tmp_path / "seen.jsonl"
    options = Request(tmp_path, poll=True, poll_interval=0.5, poll_timeout=300.0, record=record)
    with start_backend() as backend, fault_proxy(urlsplit(backend.url).port or 0, fault_rate=0.3,
                                                  seed=seed) as proxy:
        done = threading.Event()
        outage = threading.Thread(target=_outage_when_running,
                                  args=(backend.url, backend.api_key, proxy, 3.0, done, stderr), daemon=True)
        outage.start()
        out = io.StringIO()
        # a ~16 s replay: enough requests for the 30% fault rate to inject the 8 faults asserted below
        batch = Batch.of_plans([_plan(speed=1.5)], Target(normalize_backend_url(proxy.url())), backend.api_key)
        code = run_submit(batch, options, out=out, outage_every=1.0)
        done.set()
        outage.join(timeout=30)
        ids, backend_seqs = asyncio.run(_backend_view(backend.url, backend.api_key))
        faults = dict(proxy.faults)
    err = stderr.text()
    assert code == 0, out.getvalue()[-2000:] + err[-2000:]
    assert len(ids) == 1, ids  # retried creates were deduplicated by their Idempotency-Key
    seen = [entry["payload"]["seq"] for entry in read_recording(record) if entry["kind"] == "event"]
    assert seen == sorted(set(seen)), "an event was seen twice or out of order"
    assert seen == backend_seqs, "the CLI missed events the backend has"
    assert f"events:   {len(backend_seqs)}" in out.getvalue()
    assert faults.get("outage") == 1 and sum(n for f, n in faults.items() if f not in ("pass", "outage")) >= 8, faults
    notices = re.findall(r"backend unreachable since \d\d:\d\d:\d\d.*, retrying", err)
    assert notices, err
    assert err.index("backend reachable again") > err.index(notices[-1])
    assert backend.api_key not in out.getvalue() + err + record.read_text()
