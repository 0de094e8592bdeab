"""Prompt learning with a real language model: SmolLM2-135M-Instruct behind a real ``transformers serve`` process.

MIPRO reaches the server the backend runs for ``smollm2`` as a URL the user gives (``policy.local_model`` set
to the URL, the model name asked of the server, a key from ``api_key_env``) and names its proposer as
``local_model``; tiny budgets and short replies keep it within CI's time. Scores are whatever the 135M model
gets. GEPA with SmolLM2 as the policy and the proposer (one server for both) is the real-LLM example
notebook's job: ``tests/notebook/test_example_notebooks.py`` runs it once and asserts the same of it.
"""

from __future__ import annotations

import copy
import os
import tomllib
from typing import Any

import httpx
import pytest
from local_backend_helpers import wait_terminal
from prompt_learning_bodies import CONFIGS

from synth_nb.local.serve import start_backend

pytestmark = [pytest.mark.torch, pytest.mark.real_llm, pytest.mark.xdist_group("real_llm")]

#: every model-server PID the jobs reported, checked to be gone once the backend stopped
SERVER_PIDS: list[int] = []


@pytest.fixture(scope="module")
def backend():
    started = start_backend()
    yield started
    started.stop()
    for pid in SERVER_PIDS:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def _body(config: str, task_app: Any, algorithm_settings: dict[str, Any]) -> dict[str, Any]:
    pl = copy.deepcopy(tomllib.loads((CONFIGS / config).read_text(encoding="utf-8"))["prompt_learning"])
    pl["task_app_url"] = task_app.url
    pl["task_app_api_key"] = task_app.api_key
    table = pl[pl["algorithm"]]
    for dotted, value in algorithm_settings.items():
        node = table
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return {"algorithm": pl["algorithm"], "config_body": {"prompt_learning": pl}, "metadata": {}, "auto_start": True}


def _run(backend: Any, body: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    headers = {"Authorization": f"Bearer {backend.api_key}"}
    with httpx.Client(base_url=backend.api_url, headers=headers, timeout=60) as client:
        created = client.post("/prompt-learning/online/jobs", json=body)
        assert created.status_code in (200, 201), created.text
        job_id = created.json()["job_id"]
        # a generous guard against hanging on a loaded machine, not a speed assertion
        status = wait_terminal(client, f"/prompt-learning/online/jobs/{job_id}", timeout=900)
        events = client.get(f"/prompt-learning/online/jobs/{job_id}/events", params={"limit": 10000}).json()
    events = events["events"] if isinstance(events, dict) else events
    assert status["status"] == "succeeded", [e["message"] for e in events if e["level"] == "error"]
    return status, events


def _one(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [e["data"] for e in events if e["type"] == kind]
    assert found, f"no {kind} event"
    return found[-1]


def _assert_real_usage(done: dict[str, Any]) -> None:
    """Tokens, latency and cost come from the server's answers: counted, timed, and free on this machine."""
    assert done["rollouts_prompt_tokens"] > 0 and done["rollouts_completion_tokens"] > 0
    assert done["policy_calls"] > 0 and done["policy_latency_ms_mean"] > 0
    assert done["token_count_mutation"] > 0 and done["proposer_calls"] >= 1
    assert done["total_usd"] == 0.0


def test_mipro_with_a_server_url_the_user_gives(backend: Any, task_app: Any, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    # the server the backend runs for smollm2 (started here when this test runs alone), given as a user's URL
    server, _ = backend.app.state.backend.runner.model_servers.ensure("smollm2")
    SERVER_PIDS.append(server.pid)
    monkeypatch.setenv("REAL_LLM_TEST_KEY", "sk-test-real-llm-0123456789")
    body = _body("banking_mipro_real_llm.toml", task_app, {
        "num_iterations": 1, "num_evaluations_per_iteration": 2, "batch_size": 2, "max_instructions": 2,
        "max_demo_sets": 1, "full_eval_every_k": 2, "bootstrap_train_seeds": [0, 1, 2],
        "online_pool": [80, 81], "test_pool": [0, 1, 2], "meta.max_tokens": 32})
    policy = body["config_body"]["prompt_learning"]["policy"]
    policy.update(local_model=server.url + "/v1", api_key_env="REAL_LLM_TEST_KEY")  # no model name: it lists one
    status, events = _run(backend, body)

    listed = [e["data"] for e in events if e["type"] == "prompt.learning.model_server.ready"
              and e["data"]["role"] == "policy"]
    assert listed == [{"role": "policy", "url": server.url + "/v1", "model_id": server.model_id,
                       "served": "a server of yours", "started": False}]
    ready = _one(events, "prompt.learning.policy.ready")
    assert ready["url"] == server.url + "/v1" and ready["model"] == server.model_id
    baseline = body["config_body"]["prompt_learning"]["initial_prompt"]["messages"][0]["pattern"]
    proposed = [e["data"]["instruction_text"] for e in events
                if e["type"] == "mipro.instruction.proposed" and e["data"]["instruction_id"] > 0]
    assert proposed and all(p.strip() and p != baseline for p in proposed)
    done = _one(events, "prompt.learning.completed")
    assert done["proposer"] == "llm" and done["proposer_fallbacks"] < done["proposer_calls"] + 1
    _assert_real_usage({**done, "total_usd": 0.0})
    assert "total_usd" not in done, "a URL of the user's reports no cost, so none is made up"
    assert "sk-test-real-llm" not in str(events)
    assert isinstance(status["best_score"], float)
