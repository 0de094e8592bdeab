"""resolve_secrets: documented precedence, sources recorded; the caller says which keys a job requires."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth_nb.errors import SecretsError
from synth_nb.secrets import ENVIRONMENT_API_KEY, SYNTH_API_KEY, resolve_secrets


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """``root/.env`` (above cwd) and ``root/project/configs/.env`` (beside the config)."""
    project = tmp_path / "project"
    configs = project / "configs"
    configs.mkdir(parents=True)
    (tmp_path / ".env").write_text("SYNTH_API_KEY=from_cwd_parent_env_aaaa\nTASK_APP_URL=http://cwd\n")
    (configs / ".env").write_text("SYNTH_API_KEY=from_config_env_bbbb\nENVIRONMENT_API_KEY=cfg_env_cccc\n")
    config = configs / "job.toml"
    config.write_text("")
    return project, config


def test_the_flows_say_which_keys_they_require() -> None:
    from synth_nb.flows import get_flow

    assert get_flow("sft").required_secrets == (SYNTH_API_KEY,)  # ENVIRONMENT_API_KEY is not needed for SFT
    assert get_flow("rl").required_secrets == (SYNTH_API_KEY, ENVIRONMENT_API_KEY)
    assert get_flow("prompt_learning").required_secrets == (SYNTH_API_KEY, ENVIRONMENT_API_KEY)


def test_require_checks_only_the_keys_asked_for(tmp_path: Path) -> None:
    bundle = resolve_secrets(environ={"SYNTH_API_KEY": "sk_synth_only_123456"}, cwd=tmp_path)
    assert bundle.require([SYNTH_API_KEY]) is bundle
    assert bundle.require([]) is bundle
    with pytest.raises(SecretsError, match="ENVIRONMENT_API_KEY"):
        bundle.require([SYNTH_API_KEY, ENVIRONMENT_API_KEY])


def test_config_folder_env_beats_cwd_env(tmp_path: Path) -> None:
    project, config = _tree(tmp_path)
    bundle = resolve_secrets(config_path=config, environ={}, cwd=project)
    assert bundle.secret_value("SYNTH_API_KEY") == "from_config_env_bbbb"
    assert bundle.get("SYNTH_API_KEY").source == f".env:{config.parent / '.env'}"  # type: ignore[union-attr]
    # keys only the cwd's .env has still come from there
    assert bundle.setting("TASK_APP_URL") == "http://cwd"
    assert bundle.settings["TASK_APP_URL"].source == f".env:{tmp_path / '.env'}"


def test_environment_beats_discovered_env_files(tmp_path: Path) -> None:
    project, config = _tree(tmp_path)
    bundle = resolve_secrets(config_path=config, environ={"SYNTH_API_KEY": " from_environment_dddd "},
                             cwd=project)
    assert bundle.secret_value("SYNTH_API_KEY") == "from_environment_dddd"
    assert bundle.get("SYNTH_API_KEY").source == "environment"  # type: ignore[union-attr]


def test_explicit_env_files_beat_environment_first_file_wins(tmp_path: Path) -> None:
    project, config = _tree(tmp_path)
    first, second = tmp_path / "first.env", tmp_path / "second.env"
    first.write_text("SYNTH_API_KEY=from_first_file_eeee\n")
    second.write_text("SYNTH_API_KEY=from_second_file_ffff\nENVIRONMENT_API_KEY=second_env_gggg\n")
    bundle = resolve_secrets(config_path=config, env_files=[first, second],
                             environ={"SYNTH_API_KEY": "from_environment_dddd"}, cwd=project)
    assert bundle.secret_value("SYNTH_API_KEY") == "from_first_file_eeee"
    assert bundle.secret_value("ENVIRONMENT_API_KEY") == "second_env_gggg"
    assert bundle.get("ENVIRONMENT_API_KEY").source == f".env:{second.resolve()}"  # type: ignore[union-attr]


def test_broken_discovered_env_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("NOT A VALID LINE\n")
    with pytest.raises(SecretsError, match=r"\.env:1"):
        resolve_secrets(environ={}, cwd=tmp_path)


def test_blank_values_count_as_missing(tmp_path: Path) -> None:
    bundle = resolve_secrets(environ={"SYNTH_API_KEY": "   "}, cwd=tmp_path)
    assert bundle.missing([SYNTH_API_KEY]) == ["SYNTH_API_KEY"]


def test_optional_settings_are_collected(tmp_path: Path) -> None:
    env = {"SYNTH_API_KEY": "k" * 20, "SDK_EXPERIMENTAL": "1", "TASK_APP_URL": "http://t",
           "ENVIRONMENT_API_KEY_ALIASES": "alias_aaaaaaaaaaaa"}
    bundle = resolve_secrets(environ=env, cwd=tmp_path)
    assert bundle.setting("SDK_EXPERIMENTAL") == "1"
    assert bundle.setting("TASK_APP_URL") == "http://t"
    assert bundle.get("ENVIRONMENT_API_KEY_ALIASES") is not None
