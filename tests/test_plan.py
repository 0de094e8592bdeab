"""Plans keep real values for sending and mask them in every preview."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from synth_nb.errors import ConfigError
from synth_nb.flows import get_flow
from synth_nb.plan import Plan, Step, mask_payload, resolve_refs

CANARY = "sk-canary-0123456789abcdefXYZ9"


def _plan() -> Plan:
    return Plan(
        flow="prompt_learning", endpoints=get_flow("prompt_learning").endpoints,
        algorithm="gepa",
        steps=[
            Step("POST", "/files", body={"purpose": "fine-tune"}, kind="upload", upload=Path("train.jsonl"),
                 ref="training_file"),
            Step("POST", "/prompt-learning/online/jobs", body={
                "algorithm": "gepa",
                "config_body": {"prompt_learning": {"task_app_api_key": CANARY, "note": f"uses {CANARY}"}},
                "training_file": {"$ref": "training_file"},
            }),
        ],
        secrets=[SecretStr(CANARY)],
    )


def test_preview_masks_secret_keys_and_embedded_values() -> None:
    text = _plan().preview_json()
    assert CANARY not in text
    assert "••••XYZ9" in text
    doc = json.loads(text)
    assert doc["flow"] == "prompt_learning" and doc["algorithm"] == "gepa"
    assert [s["path"] for s in doc["steps"]] == ["/files", "/prompt-learning/online/jobs"]


def test_body_keeps_real_value_for_sending() -> None:
    plan = _plan()
    assert plan.create_step.body["config_body"]["prompt_learning"]["task_app_api_key"] == CANARY
    assert CANARY not in repr(plan.secrets)


def test_mask_payload_handles_secretstr_and_nesting() -> None:
    out = mask_payload({"a": [SecretStr(CANARY), {"api_key": "short"}]})
    assert out == {"a": ["••••XYZ9", {"api_key": "••••"}]}


def test_resolve_refs_replaces_upload_ids() -> None:
    body = _plan().create_step.body
    resolved = resolve_refs(body, {"training_file": "file_123"})
    assert resolved["training_file"] == "file_123"
    with pytest.raises(ConfigError, match="training_file"):
        resolve_refs(body, {})


def test_create_step_requires_a_post() -> None:
    with pytest.raises(ConfigError, match="no job-creation step"):
        plan = Plan(flow="sft", endpoints=get_flow("sft").endpoints, algorithm=None, steps=[Step("GET", "/x")])
        plan.create_step  # noqa: B018
