"""Secrets in configs and flags: masked in every repr and message from load on, sent unchanged."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
from minimal_configs import MINIMAL_GEPA, MINIMAL_MIPRO, MINIMAL_RL, MINIMAL_SFT
from pydantic import BaseModel, SecretStr

from synth_nb.config import load_config
from synth_nb.errors import ConfigError, OverrideError
from synth_nb.flows import get_flow, plan_for
from synth_nb.flows.overrides import Overrides
from synth_nb.secrets.redact import is_secret_key

from .conftest import ENV_KEY, SYNTH_KEY, VALID_LINE, bundle

TOML_KEY = "sk_env_CANARY_in_toml_0123456789abcdef"
EXTRA_SECRET = "CANARYextra0123456789zz"


def _write(folder: Path, text: str) -> Path:
    path = folder / "config.toml"
    path.write_text(text)
    return path


def _secret_fields(model: type[BaseModel], prefix: str = "") -> typing.Iterator[tuple[str, object]]:
    for name, info in model.model_fields.items():
        annotation = info.annotation
        tables = [inner for arg in (annotation, *typing.get_args(annotation))
                  for inner in (arg, *typing.get_args(arg)) if isinstance(inner, type) and issubclass(inner, BaseModel)]
        if is_secret_key(name) and not tables:  # ``[...gepa.token]`` is a table of limits, not a token
            yield f"{prefix}{name}", annotation
        for table in tables:
            yield from _secret_fields(table, f"{prefix}{name}.")


@pytest.mark.parametrize("flow", ["prompt_learning", "rl", "sft"])
def test_every_secret_named_field_is_a_secret_str(flow: str) -> None:
    fields = dict(_secret_fields(get_flow(flow).config_model))
    for name, annotation in fields.items():
        assert SecretStr in typing.get_args(annotation) or annotation is SecretStr, name
    if flow == "prompt_learning":
        assert {"prompt_learning.task_app_api_key", "prompt_learning.mipro.task_app_api_key"} <= set(fields)


GEPA_WITH_KEYS = MINIMAL_GEPA.replace(
    'results_folder = "results"',
    f'results_folder = "results"\ntask_app_api_key = "{TOML_KEY}"',
) + f'\n[prompt_learning.env_config]\napi_key = "{EXTRA_SECRET}"\nnested = {{ token = "{EXTRA_SECRET}" }}\n'
MIPRO_WITH_KEY = MINIMAL_MIPRO.replace("online_pool = [3, 4, 5]",
                                       f'online_pool = [3, 4, 5]\ntask_app_api_key = "{TOML_KEY}"')
RL_WITH_KEY = MINIMAL_RL.replace('task_url = "https://my-task-app.example.com"',
                                 f'task_url = "https://my-task-app.example.com"\napi_key = "{EXTRA_SECRET}"')
SFT_WITH_KEY = MINIMAL_SFT + f'\n[tags]\nauth_token = "{EXTRA_SECRET}"\n'


@pytest.mark.parametrize("text", [GEPA_WITH_KEYS, MIPRO_WITH_KEY, RL_WITH_KEY, SFT_WITH_KEY],
                         ids=["gepa", "mipro", "rl", "sft"])
def test_reprs_of_a_loaded_config_never_show_a_key(tmp_path: Path, text: str) -> None:
    loaded = load_config(_write(tmp_path, text))
    shown = [repr(loaded), str(loaded), repr(loaded.model), str(loaded.model), *loaded.warnings]
    shown += [repr(part) + str(part) for part in vars(loaded.model).values() if isinstance(part, BaseModel)]
    for output in shown:
        assert TOML_KEY not in output and EXTRA_SECRET not in output


def test_the_plan_sends_the_key_written_in_the_toml(tmp_path: Path) -> None:
    loaded = load_config(_write(tmp_path, GEPA_WITH_KEYS))
    assert loaded.model.prompt_learning.task_app_api_key.get_secret_value() == TOML_KEY
    plan = plan_for(loaded, Overrides(), bundle(env_key=None))
    body = plan.steps[-1].body
    assert body["config_body"]["prompt_learning"]["task_app_api_key"] == TOML_KEY
    assert TOML_KEY not in plan.preview_json()


def test_environment_key_still_wins_over_the_toml_key(tmp_path: Path) -> None:
    plan = plan_for(load_config(_write(tmp_path, GEPA_WITH_KEYS)), Overrides(), bundle())
    assert plan.steps[-1].body["config_body"]["prompt_learning"]["task_app_api_key"] == ENV_KEY


@pytest.mark.parametrize(("text", "flow"), [(MINIMAL_RL, "rl"), (MINIMAL_SFT, "sft")])
@pytest.mark.parametrize("key", [SYNTH_KEY, ENV_KEY, "0123456789abcdef0123456789abcdef"])
def test_a_key_passed_as_model_is_not_echoed(tmp_path: Path, text: str, flow: str, key: str) -> None:
    (tmp_path / "train.jsonl").write_text(VALID_LINE)
    loaded = load_config(_write(tmp_path, text))
    with pytest.raises(OverrideError) as info:
        plan_for(loaded, Overrides(model=key), bundle())
    assert info.value.field == "model"
    assert key not in str(info.value) and key[-4:] in str(info.value)


def test_a_short_secret_passed_as_model_is_masked_entirely(tmp_path: Path) -> None:
    loaded = load_config(_write(tmp_path, MINIMAL_RL))
    short = "hunter2-ok"
    with pytest.raises(OverrideError) as info:
        plan_for(loaded, Overrides(model=short), bundle(env_key=short))
    assert short not in str(info.value)


@pytest.mark.parametrize(("text", "old"), [
    (MINIMAL_SFT, 'model = "Qwen/Qwen3-0.6B"'),
    (MINIMAL_RL, 'base = "Qwen/Qwen3-4B"'),
    (MINIMAL_GEPA, 'model = "llama-3.1-8b-instant"'),
])
def test_a_key_written_as_a_model_is_not_echoed(tmp_path: Path, text: str, old: str) -> None:
    key = "sk_synth_CANARY_as_model_0123456789"
    new = old.split("=")[0] + f'= "{key}"'
    with pytest.raises(ConfigError) as info:
        load_config(_write(tmp_path, text.replace(old, new)))
    assert key not in str(info.value)


def test_task_url_warning_masks_a_key_inside_the_url(tmp_path: Path) -> None:
    loaded = load_config(_write(tmp_path, MINIMAL_GEPA))
    plan = plan_for(loaded, Overrides(task_url=f"http://127.0.0.1:9/?k={ENV_KEY}"), bundle())
    assert plan.warnings and all(ENV_KEY not in w for w in plan.warnings)
