"""``synth_nb.pipeline``: discovery rules, targets, the one API-key rule, secrets for the embedded backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from minimal_configs import MINIMAL_GEPA, MINIMAL_SFT
from pydantic import SecretStr

from synth_nb import pipeline
from synth_nb.backend import LOCAL
from synth_nb.errors import ConfigError, OverrideError, SecretsError
from synth_nb.pipeline import SecretSources, Target
from synth_nb.secrets import SecretBundle

HOSTED_KEY = "sk_hosted_CANARY_aaaaaaaa_1111"
OTHER_KEY = "sk_hosted_CANARY_bbbbbbbb_2222"


class FakeEmbedded:
    url = "http://127.0.0.1:5555"
    api_key = "sk_local_embedded_key_0000"
    task_app_key = None
    stopped = 0

    def task_app_url(self, name: str) -> str:
        return f"{self.url}/task-apps/{name}"

    def stop(self) -> None:
        self.stopped += 1


@pytest.fixture
def embedded() -> Iterator[FakeEmbedded]:
    backend = FakeEmbedded()
    pipeline.use_local_backend(backend)
    yield backend
    pipeline.stop_local_backend()


def test_choose_configs_takes_the_only_valid_one_or_lists_every_candidate(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "gepa.toml").write_text(MINIMAL_GEPA)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # not a training config: ignored
    (tmp_path / "broken.toml").write_text("[prompt_learning\n")  # does not parse: listed, never chosen
    assert [c.path.name for c in pipeline.choose_configs(tmp_path, several=False)] == ["gepa.toml"]
    (tmp_path / "sft.toml").write_text(MINIMAL_SFT)
    assert [c.path.name for c in pipeline.choose_configs(tmp_path, several=True)] == ["gepa.toml"]  # no dataset
    (tmp_path / "train.jsonl").write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    assert {c.path.name for c in pipeline.choose_configs(tmp_path, several=True)} == {"gepa.toml", "sft.toml"}
    with pytest.raises(ConfigError, match=r"3 training configs found under .* \(2 valid, 1 invalid\)") as caught:
        pipeline.choose_configs(tmp_path, several=False)
    text = str(caught.value)
    assert "[prompt_learning/gepa] configs/gepa.toml  (valid)" in text and "[unreadable] broken.toml" in text


def test_an_empty_folder_asks_for_a_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no training config found"):
        pipeline.choose_configs(tmp_path, several=True)


def test_local_is_started_only_when_asked(embedded: FakeEmbedded) -> None:
    preview = pipeline.resolve_target("local", start_local=False)
    assert preview == Target(LOCAL) and not preview.started and preview.is_embedded
    target = pipeline.resolve_target("local")
    assert target == Target("http://127.0.0.1:5555/api", embedded.api_key) and target.started
    assert embedded.api_key not in repr(target)


def test_the_running_embedded_backends_url_gets_its_key(embedded: FakeEmbedded) -> None:
    assert pipeline.resolve_target("http://127.0.0.1:5555/").own_key == embedded.api_key
    assert pipeline.resolve_target("http://127.0.0.1:5556").own_key is None


def test_a_bad_backend_is_an_override_error() -> None:
    with pytest.raises(OverrideError) as caught:
        pipeline.resolve_target("ftp://nowhere")
    assert caught.value.field == "backend"


def _bundle(key: str) -> SecretBundle:
    return SecretBundle().with_value("SYNTH_API_KEY", key, source="environment")


def test_the_embedded_backends_own_key_always_wins() -> None:
    target = Target("http://127.0.0.1:5555/api", "sk_local_embedded_key_0000")
    assert pipeline.api_key(target, [_bundle(HOSTED_KEY), _bundle(OTHER_KEY)]) == "sk_local_embedded_key_0000"


def test_a_hosted_backend_needs_one_synth_api_key() -> None:
    target = Target("https://example.test/api")
    assert pipeline.api_key(target, [_bundle(HOSTED_KEY), None, _bundle(HOSTED_KEY)]) == HOSTED_KEY
    with pytest.raises(SecretsError, match="different SYNTH_API_KEY values"):
        pipeline.api_key(target, [_bundle(HOSTED_KEY), _bundle(OTHER_KEY)])
    with pytest.raises(SecretsError, match="missing required key SYNTH_API_KEY") as caught:
        pipeline.api_key(target, [SecretBundle()])
    assert "--env-file" in str(caught.value)


def test_secrets_for_the_embedded_backend_replace_pasted_and_dotenv_keys(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"SYNTH_API_KEY={HOSTED_KEY}\nENVIRONMENT_API_KEY=sk_env_from_dotenv_3333\n")
    sources = SecretSources(pasted={"SYNTH_API_KEY": SecretStr(OTHER_KEY)}, environ={}, cwd=tmp_path)
    embedded = sources.resolve(Target("http://127.0.0.1:5555/api", "sk_local_embedded_key_0000"))
    assert embedded.secret_value("SYNTH_API_KEY") == "sk_local_embedded_key_0000"
    assert embedded.get("SYNTH_API_KEY").source == "local backend"  # type: ignore[union-attr]
    assert embedded.secret_value("ENVIRONMENT_API_KEY") == "sk_env_from_dotenv_3333"
    hosted = sources.resolve(Target("https://example.test/api"))
    assert hosted.secret_value("SYNTH_API_KEY") == OTHER_KEY  # a pasted key beats the .env for a hosted backend
    assert sources.api_key(Target("https://example.test/api")) == OTHER_KEY


def test_the_embedded_backend_brings_its_own_synth_api_key() -> None:
    assert pipeline.required_secrets("sft", Target(LOCAL)) == ()
    assert pipeline.required_secrets("sft", Target("https://example.test/api")) == ("SYNTH_API_KEY",)
    assert pipeline.required_secrets("rl", Target(LOCAL)) == ("ENVIRONMENT_API_KEY",)


def test_record_paths_name_one_file_per_job_when_there_are_several(tmp_path: Path) -> None:
    assert pipeline.record_path(tmp_path / "run.jsonl", "job_a", several=False) == tmp_path / "run.jsonl"
    assert pipeline.record_path(tmp_path / "run.jsonl", "job_a", several=True) == tmp_path / "run-job_a.jsonl"
    assert pipeline.record_path(tmp_path / "run", "job_a", several=True) == tmp_path / "run-job_a.jsonl"


def test_stopping_the_embedded_backend_forgets_it(embedded: FakeEmbedded) -> None:
    pipeline.stop_local_backend()
    assert embedded.stopped == 1
    assert pipeline.resolve_target("http://127.0.0.1:5555").own_key is None
