"""Shared pieces for plan tests: a minimal config object, canary secrets, a clean environment."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from synth_nb.config.detect import detect_flow
from synth_nb.secrets import ResolvedSecret, SecretBundle

SYNTH_KEY = "sk_synth_CANARY_aaaaaaaaaaaa_1111"
ENV_KEY = "sk_env_CANARY_bbbbbbbbbbbb_2222"
VALID_LINE = '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n'


@dataclass
class StubConfig:
    """The attributes plans read from ``LoadedConfig``, without schema validation."""

    path: Path
    flow: str
    algorithm: str | None
    raw: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    def line_of(self, dotted_key: str) -> int | None:
        return None


def stub_config(path: Path) -> StubConfig:
    raw = tomllib.loads(path.read_text())
    flow, algorithm = detect_flow(raw)
    assert flow is not None, path
    return StubConfig(path=path, flow=flow, algorithm=algorithm, raw=raw)


def write_config(folder: Path, text: str, name: str = "config.toml") -> StubConfig:
    path = folder / name
    path.write_text(text)
    return stub_config(path)


def bundle(env_key: str | None = ENV_KEY, **settings: str) -> SecretBundle:
    from synth_nb.secrets import ResolvedSetting

    secrets = {"SYNTH_API_KEY": ResolvedSecret("SYNTH_API_KEY", SecretStr(SYNTH_KEY), "test")}
    if env_key:
        secrets["ENVIRONMENT_API_KEY"] = ResolvedSecret("ENVIRONMENT_API_KEY", SecretStr(env_key), "test")
    return SecretBundle(secrets=secrets, settings={k: ResolvedSetting(k, v, "environment")
                                                    for k, v in settings.items()})


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SDK_EXPERIMENTAL", "SDK_EXPERIMENTAL_MODELS"):
        monkeypatch.delenv(var, raising=False)
