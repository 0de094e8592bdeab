"""pydantic errors become dotted-key problems with fixes; unknown keys are found at every depth."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from synth_nb.config._problems import _show, pydantic_problems, unknown_keys
from synth_nb.flows.prompt_learning.config import PromptLearningConfig
from synth_nb.flows.rl.config import RlConfig
from synth_nb.secrets import mask


def _problems(model: type[BaseModel], raw: dict[str, Any]) -> list[Any]:
    with pytest.raises(ValidationError) as info:
        model.model_validate(raw)
    return pydantic_problems(info.value, model, raw)


def test_missing_table_vs_missing_key() -> None:
    problems = {p.key: p for p in _problems(RlConfig, {"algorithm": {"type": "online", "method": "x"}})}
    assert problems[("rollout",)].message == "[rollout] section is required"
    assert problems[("compute",)].message == "[compute] section is required"
    assert problems[("algorithm", "variety")].message == "variety is required"
    assert problems[("algorithm", "variety")].hint == "add variety = ... to [algorithm]"


def test_typo_suggestion_for_missing_key() -> None:
    raw = {"prompt_learning": {"algorithm": "gepa", "task_app_url": "http://x",
                               "policy": {"modle": "m", "provider": "openai", "inference_mode": "synth_hosted"}}}
    [problem] = _problems(PromptLearningConfig, raw)
    assert problem.key == ("prompt_learning", "policy", "model")
    assert "did you mean 'model'" in problem.hint


def test_type_and_bound_messages() -> None:
    raw: dict[str, Any] = {"prompt_learning": {
        "algorithm": "adas", "task_app_url": "http://x", "task_app_api_key": 5,
        "policy": {"model": "m", "provider": "openai", "inference_mode": "synth_hosted", "max_completion_tokens": -1}}}
    problems = {p.key: p for p in _problems(PromptLearningConfig, raw)}
    assert problems[("prompt_learning", "task_app_api_key")].message == "must be a string (got an integer)"
    assert problems[("prompt_learning", "policy", "max_completion_tokens")].message == "must be > 0 (got -1)"
    assert problems[("prompt_learning", "algorithm")].message == "must be one of 'gepa' or 'mipro' (got 'adas')"


def test_values_of_secret_looking_keys_are_masked() -> None:
    canary = "sk-live-canary-value-98765"
    for key in (("prompt_learning", "task_app_api_key"), ("judge", "api_key"), ("x", "secret"), ("x", "token")):
        shown = _show(key, canary)
        assert canary not in shown and shown == mask(canary)
    assert _show(("policy", "provider"), "groq") == "'groq'"
    assert _show(("policy", "max_tokens"), 3) == "3"
    assert len(_show(("a",), "x" * 500)) == 60


def test_unknown_keys_walk_nested_models_and_lists() -> None:
    raw = {"prompt_learning": {
        "algorithm": "gepa", "task_app_url": "http://x", "typo_key": 1,
        "policy": {"model": "m", "provider": "openai", "inference_mode": "synth_hosted", "temprature": 0.1},
        "gepa": {"modules": [{"module_id": "a", "extra": True}]}}, "whatever": {}}
    model = PromptLearningConfig.model_validate(raw)
    found = dict(unknown_keys(model))
    assert found == {
        ("whatever",): None,
        ("prompt_learning", "typo_key"): None,
        ("prompt_learning", "policy", "temprature"): "temperature",
        ("prompt_learning", "gepa", "modules", 0, "extra"): None,
    }
