"""Full HTTP path: local backend -> GEPA executor -> task app -> backend policy route -> embedding policy."""

from __future__ import annotations

import time

import httpx
import pytest
from prompt_learning_bodies import small_gepa

from synth_nb.local.serve import start_backend

pytestmark = pytest.mark.torch


def test_gepa_job_on_the_local_backend_with_the_offline_policy(task_app) -> None:
    body = small_gepa(task_app, budget=96, evaluation__test_pool=list(range(16)))
    body["config_body"]["prompt_learning"]["policy"]["local_policy"] = "offline"
    body["auto_start"] = True
    with start_backend() as backend:
        headers = {"Authorization": f"Bearer {backend.api_key}"}
        with httpx.Client(base_url=backend.api_url, headers=headers, timeout=60) as client:
            bad = {**body, "config_body": {"prompt_learning": {**body["config_body"]["prompt_learning"],
                                                               "gepa": {"evaluation": {"train_seeds": [0]}}}}}
            rejected = client.post("/prompt-learning/online/jobs", json=bad)
            assert rejected.status_code == 422 and "val_seeds" in rejected.json()["detail"]

            created = client.post("/prompt-learning/online/jobs", json=body)
            assert created.status_code in (200, 201), created.text
            job_id = created.json()["job_id"]
            deadline = time.monotonic() + 600  # a guard against hanging, not a speed assertion
            status: dict = {}
            while time.monotonic() < deadline:
                status = client.get(f"/prompt-learning/online/jobs/{job_id}").json()
                if status["status"] in ("succeeded", "failed", "cancelled"):
                    break
                time.sleep(0.5)
            events = client.get(f"/prompt-learning/online/jobs/{job_id}/events", params={"limit": 10000}).json()
            events = events["events"] if isinstance(events, dict) else events
    assert status["status"] == "succeeded", [e for e in events if e["level"] == "error"]
    types = {e["type"] for e in events}
    assert {"prompt.learning.policy.ready", "prompt.learning.validation.summary", "prompt.learning.best.prompt",
            "prompt.learning.completed"} <= types
    ready = next(e for e in events if e["type"] == "prompt.learning.policy.ready")["data"]
    assert ready["policy"] == "offline" and ready["model"].startswith("offline:")
    done = next(e for e in events if e["type"] == "prompt.learning.completed")["data"]
    assert done["rollouts_completed"] <= 96
    assert isinstance(status.get("best_score"), float) and status["best_prompt"]["sections"]
