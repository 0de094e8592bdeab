"""A small prompt search is run once in full by the check (``POST /dry-rollout`` with ``proposal.rehearse``):
its span is the wall-time estimate, no job is created and nothing is left behind; a larger one is not run,
and one that outlasts its limit is stopped, each with the reason the card shows."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from local_backend_helpers import API_KEY
from prompt_learning_bodies import small_gepa

from synth_nb.local import LocalBackend
from synth_nb.local.server import dry_search


def _dry(backend: LocalBackend, body: dict[str, Any], rehearse: Any) -> httpx.Response:
    return httpx.post(f"{backend.url}/api/dry-rollout", headers={"Authorization": f"Bearer {API_KEY}"}, timeout=120,
                      json={"kind": "prompt_learning", "body": body, "seed": 0, "split": "train",
                            "proposal": {"seeds": list(range(8)), "minibatch": 4, "concurrency": 8,
                                         "rehearse": rehearse}})


def _jobs(backend: LocalBackend) -> list[Any]:
    listed = httpx.get(f"{backend.url}/api/prompt-learning/online/jobs", timeout=30,
                       headers={"Authorization": f"Bearer {API_KEY}"}).json()
    return list(listed.get("jobs", listed) if isinstance(listed, dict) else listed)


def test_a_small_search_is_run_once_in_full_for_no_job_and_leaves_nothing(
        backend: LocalBackend, task_app: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "scratch"  # where the rehearsal's scratch folder goes
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    body = small_gepa(task_app, budget=40)
    answer = _dry(backend, body, 40 + 32)
    assert answer.status_code == 200, answer.text
    rehearsal = answer.json()["proposal"]["rehearsal"]
    # the job's own executor ran to its end: its events (start, trials, held-out, complete) were stored
    assert rehearsal["seconds"] > 0 and rehearsal["cpu_seconds"] > 0 and rehearsal["events"] >= 5, rehearsal
    # what its usage report counted, as the job's report counts it
    assert isinstance(rehearsal["tokens"], int) and rehearsal["tokens"] > 0 and rehearsal["rollouts"] >= 40, rehearsal
    assert _jobs(backend) == [] and list(scratch.iterdir()) == []
    # a search too long for its check, at the dry pace, is not run; one that outlasts the limit is stopped
    monkeypatch.setattr(dry_search, "LIMIT_S", 0.0)
    stopped = _dry(backend, body, 72).json()["proposal"]["rehearsal"]
    assert stopped == {"stopped": "the rehearsal took longer than 0 s and was stopped"}
    assert _jobs(backend) == [] and list(scratch.iterdir()) == []
    skipped = dry_search.rehearse(None, body, None,  # type: ignore[arg-type]  # not run: no runner needed
                                  rollouts=1_000, pace=0.01)
    assert skipped == {"skipped": "the job's 1,000 rollouts take more than 3 s at the dry pace"}
    # what is asked to be rehearsed is the job's rollout count, a positive integer
    for odd in ("72", 0, -1, True, 1.5):
        refused = _dry(backend, body, odd)
        assert refused.status_code == 422 and "proposal.rehearse must be the job's rollouts" in refused.text
