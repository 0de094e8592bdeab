"""The bundled banking task app speaks the task-app contract and calls the policy over HTTP."""

from __future__ import annotations

import httpx
import pytest
from prompt_learning_support import TASK_APP_KEY

from synth_nb.local.examples.banking import load_dataset
from synth_nb.local.examples.contract import normalize_inference_url
from synth_nb.local.policies.keyword import KeywordPolicy

AUTH = {"X-API-Key": TASK_APP_KEY}


def _rollout(inference_url: str, seed: int = 3, split: str = "train") -> dict:
    return {"run_id": "r1", "mode": "eval", "ops": ["agent", "env"],
            "env": {"env_name": "banking", "seed": seed, "config": {"split": split}},
            "policy": {"policy_name": "banking", "config": {"model": "m", "inference_url": inference_url,
                                                            "trace_correlation_id": "cid_1"}}}


def test_dataset_is_balanced_and_large_enough() -> None:
    data = load_dataset()
    assert len(data.intents) >= 15
    for split, per_intent in (("train", 8), ("test", 4)):
        counts = {label: 0 for label in data.intents}
        for example in data.splits[split]:
            counts[example.intent] += 1
        assert set(counts.values()) == {per_intent}
    queries = [e.query for rows in data.splits.values() for e in rows]
    assert len(set(queries)) == len(queries)


def test_auth_health_info_and_task_info(task_app) -> None:
    assert httpx.get(f"{task_app.url}/").json()["status"] == "ok"
    assert httpx.get(f"{task_app.url}/health").status_code == 401
    assert httpx.get(f"{task_app.url}/health", headers={"X-API-Key": "wrong"}).status_code == 401
    assert httpx.get(f"{task_app.url}/health", headers={"Authorization": f"Bearer {TASK_APP_KEY}"}).json()["healthy"]
    info = httpx.get(f"{task_app.url}/info", headers=AUTH).json()
    assert info["service"]["task"]["id"] == "synth-nb-banking"
    taskset = httpx.get(f"{task_app.url}/task_info", headers=AUTH).json()["taskset"]
    assert taskset["dataset"]["splits"] == {"train": 128, "test": 64}
    one = httpx.get(f"{task_app.url}/task_info", params={"seed": 3}, headers=AUTH).json()
    assert one["task_metadata"]["query"] == load_dataset().example("train", 3).query
    many = httpx.get(f"{task_app.url}/task_info", params=[("seed", 1), ("seed", 2)], headers=AUTH).json()
    assert len(many) == 2


def test_rollout_calls_the_policy_and_scores_the_tool_call(task_app, policy_server) -> None:
    seen = []

    def policy(request: dict) -> dict:
        seen.append(request)
        return KeywordPolicy().complete(request)

    url = policy_server.add(policy)
    body = httpx.post(f"{task_app.url}/rollout", json=_rollout(url + "?cid=cid_1"), headers=AUTH).json()
    (request,) = seen
    assert request["tool_choice"] == "required" and request["messages"][0]["role"] == "system"
    assert "Customer Query: The ATM ate my card" in request["messages"][1]["content"]
    step = body["trajectories"][0]["steps"][0]
    assert step["info"]["expected_intent"] == "card_swallowed"
    assert step["info"]["messages"] == request["messages"]
    assert body["metrics"]["outcome_score"] in (0.0, 1.0)
    assert body["metrics"]["outcome_score"] == float(step["info"]["predicted_intent"] == "card_swallowed")
    assert body["trace_correlation_id"] == "cid_1"


@pytest.mark.parametrize(("change", "status"), [({"mode": None}, 422), ({"split": "nope"}, 422),
                                                 ({"inference_url": "ftp://x"}, 422)])
def test_bad_rollouts_get_4xx(task_app, change, status) -> None:
    body = _rollout(change.get("inference_url", "http://127.0.0.1:9/v1"), split=change.get("split", "train"))
    if "mode" in change:
        body.pop("mode")
    response = httpx.post(f"{task_app.url}/rollout", json=body, headers=AUTH)
    assert response.status_code == status and "detail" in response.json()


def test_unreachable_policy_is_a_502(task_app) -> None:
    response = httpx.post(f"{task_app.url}/rollout", json=_rollout("http://127.0.0.1:9/v1"), headers=AUTH)
    assert response.status_code == 502 and "policy call failed" in response.json()["detail"]


@pytest.mark.parametrize(("url", "expected"), [
    ("http://h/v1/policies/p1", "http://h/v1/policies/p1/chat/completions"),
    ("http://h/v1/policies/p1?cid=x", "http://h/v1/policies/p1/chat/completions?cid=x"),
    ("http://h/v1", "http://h/v1/chat/completions"),
    ("http://h", "http://h/v1/chat/completions"),
    ("http://h/v1/chat/completions", "http://h/v1/chat/completions"),
])
def test_inference_url_normalisation(url, expected) -> None:
    assert normalize_inference_url(url) == expected
