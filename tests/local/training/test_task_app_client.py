from __future__ import annotations

import httpx
import pytest

from synth_nb.local.errors import TaskAppError
from synth_nb.local.training.task_app_client import check_task_app, rollout_reward

KEY = "sk_env_client_canary_4321"


def _client(handler):
    return httpx.Client(transport=httpx.MockTransport(handler))


@pytest.mark.parametrize(("answer", "reward"), [
    ({"metrics": {"outcome_score": 0.75, "mean_return": 0.1}}, 0.75),
    ({"metrics": {"mean_return": 0.5}}, 0.5),
    ({"metrics": {"outcome_reward": 1}}, 1.0),
])
def test_reward_is_outcome_score_else_mean_return(answer, reward):
    seen = {}

    def handler(request):
        seen["key"] = request.headers["x-api-key"]
        return httpx.Response(200, json=answer)

    assert rollout_reward(_client(handler), "http://app", {"run_id": "r"}, KEY) == reward
    assert seen["key"] == KEY


@pytest.mark.parametrize(("response", "message"), [
    (httpx.Response(200, text="<html>oops</html>"), "did not answer JSON"),
    (httpx.Response(200, json={"ok": True}), "without a metrics object"),
    (httpx.Response(200, json={"metrics": {"outcome_score": "high"}}), "without a numeric metrics.outcome_score"),
    (httpx.Response(502, json={"detail": "policy call failed"}), "HTTP 502: policy call failed"),
])
def test_garbage_rollout_answers_become_clear_errors(response, message):
    with pytest.raises(TaskAppError, match=message) as info:
        rollout_reward(_client(lambda request: response), "http://app", {}, KEY)
    assert KEY not in str(info.value)


def test_health_check_explains_auth_failures_and_unreachable_apps(monkeypatch):
    def refuse(request):
        return httpx.Response(400, json={"detail": {"error": {"code": "unauthorised"}}})

    original = httpx.Client.__init__

    def with_mock_transport(self, *args, **kwargs):
        original(self, *args, **{**kwargs, "transport": httpx.MockTransport(refuse)})

    with monkeypatch.context() as patch:
        patch.setattr(httpx.Client, "__init__", with_mock_transport)
        with pytest.raises(TaskAppError, match="check ENVIRONMENT_API_KEY"):
            check_task_app("http://app", KEY)
    with pytest.raises(TaskAppError, match="is not reachable"):
        check_task_app("http://127.0.0.1:9", KEY, timeout=2)
