from __future__ import annotations

import importlib

import httpx
import pytest

from synth_nb.local.examples.charclass import REPLY_CHARS, create_app, instance, score_reply, serve

KEY = "sk_env_charclass_canary_0001"


def test_instances_are_deterministic_and_cycle_through_the_classes():
    assert instance(5) == instance(5)
    assert [instance(s).class_name for s in range(4)] == ["digits", "vowels", "capital letters", "punctuation marks"]
    assert instance(7, ["digits", "vowels"]).class_name == "vowels"
    assert instance(0).class_name in instance(0).prompt.lower()


def test_score_is_the_share_of_the_first_characters_in_the_class():
    assert score_reply("12345678", "digits") == 1.0
    assert score_reply("1234abcd", "digits") == 0.5
    assert score_reply("12", "digits") == 2 / REPLY_CHARS
    assert score_reply("AEIOUaeiou", "vowels") == 3 / REPLY_CHARS
    assert score_reply("", "punctuation marks") == 0.0


@pytest.fixture
def app_with_policy(policy_server):
    replies = {"text": "1234XYZ!"}
    policy_server.handlers["pol_test"] = lambda request: {
        "choices": [{"message": {"role": "assistant", "content": replies["text"]}}], "seen": request}
    handle, key = serve(api_key=KEY)
    yield handle.url, f"{policy_server.url}/v1/policies/pol_test", replies
    handle.stop()


def _rollout(seed, url, env_config=None):
    return {"run_id": "r1", "mode": "rl", "ops": ["agent", "env"], "env": {"seed": seed, "config": env_config or {}},
            "policy": {"config": {"inference_url": f"{url}?cid=abc", "trace_correlation_id": "abc"}}}


def test_rollout_calls_the_policy_and_scores_its_reply(app_with_policy):
    app_url, policy_url, replies = app_with_policy
    with httpx.Client(headers={"X-API-Key": KEY}) as client:
        assert client.get(f"{app_url}/health").json()["healthy"] is True
        assert client.get(f"{app_url}/task_info", params={"seed": 2}).json()["task_metadata"]["class"] == \
            "capital letters"
        body = client.post(f"{app_url}/rollout", json=_rollout(0, policy_url)).json()
        assert body["metrics"]["outcome_score"] == 0.5  # "1234" of "1234XYZ!" are digits
        assert body["trajectories"][0]["steps"][0]["info"]["reply"] == "1234XYZ!"
        assert body["trace_correlation_id"] == "abc"
        replies["text"] = "!?!?.,;:"
        body = client.post(f"{app_url}/rollout", json=_rollout(3, policy_url)).json()
        assert body["metrics"]["mean_return"] == 1.0
        bad = client.post(f"{app_url}/rollout", json=_rollout(0, policy_url, {"classes": ["emoji"]}))
        assert bad.status_code == 422


def test_requests_without_the_key_are_refused(app_with_policy):
    app_url, policy_url, _ = app_with_policy
    assert httpx.get(f"{app_url}/health").status_code == 401
    assert httpx.get(f"{app_url}/").json()["status"] == "ok"
    response = httpx.post(f"{app_url}/rollout", json=_rollout(0, policy_url), headers={"X-API-Key": "wrong"})
    assert response.status_code == 401 and KEY not in response.text


def test_a_failing_policy_is_reported_as_a_bad_gateway(policy_server):
    handle, _ = serve(api_key=KEY)
    try:
        response = httpx.post(f"{handle.url}/rollout", json=_rollout(0, f"{policy_server.url}/v1/policies/nope"),
                              headers={"X-API-Key": KEY})
        assert response.status_code == 502 and "policy call failed" in response.json()["detail"]
    finally:
        handle.stop()


def test_create_app_reads_the_key_from_the_environment_when_none_is_given(monkeypatch):
    from starlette.testclient import TestClient

    monkeypatch.setenv("ENVIRONMENT_API_KEY", KEY)
    client = TestClient(create_app())
    assert client.get("/info", headers={"Authorization": f"Bearer {KEY}"}).json()["service"]["task"]["id"] == \
        "synth-nb-charclass"
    monkeypatch.delenv("ENVIRONMENT_API_KEY")
    assert client.get("/health", headers={"X-API-Key": KEY}).status_code == 503


@pytest.mark.parametrize("name", ["charclass", "banking"])
def test_start_task_app_serves_the_example_it_is_named_after(name):
    from synth_nb.local.examples import TASK_APPS, start_task_app
    from synth_nb.pipeline.bundled_apps import NAMES

    assert set(TASK_APPS) == set(NAMES)
    with start_task_app(name, api_key=KEY) as handle:
        info = httpx.get(f"{handle.url}/info", headers={"X-API-Key": KEY}, timeout=10).json()
        assert handle.api_key == KEY and KEY not in repr(handle)
    assert info["service"]["task"]["id"] == importlib.import_module(f"synth_nb.local.examples.{name}").APP_ID


def test_start_task_app_rejects_an_unknown_example():
    from synth_nb.local.examples import start_task_app

    with pytest.raises(ValueError, match="available: banking, charclass"):
        start_task_app("crafter")
