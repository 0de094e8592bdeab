"""Prompt-steered offline policies, the upstream forwarder and policy selection."""

from __future__ import annotations

import json

import httpx
import respx

from synth_nb.local.examples.banking import load_dataset
from synth_nb.local.policies import PolicySpec, build_policy
from synth_nb.local.policies._intents import parse_intent_request
from synth_nb.local.policies.keyword import KeywordPolicy
from synth_nb.local.policies.upstream import UpstreamPolicy, chat_completions_url

DATA = load_dataset()


def _request(system: str, query: str, tools: bool = True) -> dict:
    messages = DATA.render_messages(query)
    messages[0]["content"] = system
    request = {"model": "m", "messages": messages}
    if tools:
        request["tools"] = [{"type": "function", "function": {
            "name": "banking_classify", "parameters": {"properties": {"intent": {"enum": list(DATA.intents)}}}}}]
    return request


def test_request_parsing_reads_labels_phrases_and_examples() -> None:
    system = "Classify.\n\nIntents:\n- card_swallowed: atm kept it; machine ate it\nExample: rate please => exchange_rate"
    parsed = parse_intent_request(_request(system, "hello there", tools=False))
    assert parsed.query == "hello there" and parsed.labels == list(DATA.intents)
    assert parsed.prototypes["card_swallowed"] == ["card swallowed", "atm kept it", "machine ate it"]
    assert parsed.prototypes["exchange_rate"] == ["exchange rate", "rate please"]


def test_keyword_policy_follows_the_prompt() -> None:
    policy = KeywordPolicy()
    query = "the hole in the wall kept my plastic"
    plain = policy.complete(_request("Classify.", query))
    args = json.loads(plain["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
    assert args["intent"] != "card_swallowed"
    steered = policy.complete(_request("Classify.\nIntents:\n- card_swallowed: hole in the wall kept my plastic", query))
    args = json.loads(steered["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
    assert args["intent"] == "card_swallowed"
    assert steered["usage"]["prompt_tokens"] > 0


def test_text_answer_without_tools() -> None:
    reply = KeywordPolicy().complete(_request("Classify.", "change pin please", tools=False))
    assert reply["choices"][0]["message"]["content"] == "change_pin"


@respx.mock
def test_upstream_forwards_with_bearer_and_model_override() -> None:
    route = respx.post("http://models.local/v1/chat/completions").mock(return_value=httpx.Response(
        200, json={"choices": [{"message": {"role": "assistant", "content": "change_pin"}}]}))
    policy = UpstreamPolicy("http://models.local/v1", "sk-canary-123456789", "small-model")
    reply = policy.complete({"model": "ignored", "messages": [{"role": "user", "content": "hi"}]})
    assert reply["choices"][0]["message"]["content"] == "change_pin"
    sent = route.calls.last.request
    assert sent.headers["authorization"] == "Bearer sk-canary-123456789"
    assert json.loads(sent.content)["model"] == "small-model"


@respx.mock
def test_upstream_errors_do_not_leak_the_key() -> None:
    respx.post("http://models.local/v1/chat/completions").mock(return_value=httpx.Response(500, text="boom"))
    policy = UpstreamPolicy("http://models.local/v1", "sk-canary-123456789")
    try:
        policy.complete({"messages": []})
    except RuntimeError as exc:
        assert "500" in str(exc) and "canary" not in str(exc)
    else:
        raise AssertionError("expected PolicyCallError")


def test_chat_completions_url_rules() -> None:
    assert chat_completions_url("http://h/v1") == "http://h/v1/chat/completions"
    assert chat_completions_url("http://h") == "http://h/v1/chat/completions"
    assert chat_completions_url("http://h/openai/v1/") == "http://h/openai/v1/chat/completions"


def test_spec_key_resolution_and_safe_description() -> None:
    spec = PolicySpec("upstream", url="http://h/v1", provider="groq", api_key_env="MY_KEY")
    assert spec.resolve_key({"MY_KEY": "k1", "GROQ_API_KEY": "k2"}) == "k1"
    assert PolicySpec("upstream", provider="groq").resolve_key({"GROQ_API_KEY": "k2"}) == "k2"
    described = PolicySpec("upstream", url="http://h", api_key="sk-canary-123456789").describe()
    assert "sk-canary" not in json.dumps(described)
    assert build_policy(PolicySpec("keyword")).name == "keyword"
