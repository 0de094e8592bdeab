"""plan_for dispatches on the config's flow and resolves secrets when none are given."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth_nb.errors import ConfigError, SecretsError
from synth_nb.flows import get_flow, plan_for

from .conftest import write_config
from .test_prompt_learning import GEPA


def test_resolves_secrets_from_a_dotenv_beside_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYNTH_API_KEY", raising=False)
    monkeypatch.delenv("ENVIRONMENT_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    config = write_config(tmp_path, GEPA)
    with pytest.raises(SecretsError, match="SYNTH_API_KEY, ENVIRONMENT_API_KEY"):
        plan_for(config)
    (tmp_path / ".env").write_text("SYNTH_API_KEY=sk_dotenv_synth_123456\nENVIRONMENT_API_KEY=sk_dotenv_env_7890ab\n")
    plan = plan_for(config)
    assert plan.flow == "prompt_learning"
    assert "sk_dotenv_env_7890ab" not in plan.preview_json()


def test_get_flow_rejects_unknown_names_with_the_known_ones() -> None:
    assert get_flow("rl").name == "rl"
    with pytest.raises(ConfigError, match="prompt_learning, rl, sft"):
        get_flow("dpo")
