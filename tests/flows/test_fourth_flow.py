"""A fourth flow defined here alone goes through every layer: detection and validation, ``synth-nb train
--dry-run`` (text and JSON), the notebook's text preview, the live chart, noise and the artifacts.

Nothing outside this module knows about it: registering the flow is all it takes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from pydantic import Field

from synth_nb import pipeline
from synth_nb.cli.main import main
from synth_nb.config import load_config, load_config_text
from synth_nb.contract import FlowEndpoints
from synth_nb.errors import ConfigError
from synth_nb.flows import Flow, flow_names, get_flow, registered
from synth_nb.flows.artifacts import Artifact, FinishedJob
from synth_nb.flows.base import ConfigLike
from synth_nb.flows.chart import ChartSpec, SeriesSpec
from synth_nb.flows.overrides import Overrides
from synth_nb.flows.schema import ExtraModel, Problem, warning
from synth_nb.notebook import artifacts
from synth_nb.notebook.chart import LiveChart
from synth_nb.notebook.preview_text import preview_text
from synth_nb.plan import Plan, Step
from synth_nb.records import Event, MetricPoint
from synth_nb.secrets import SYNTH_API_KEY, SecretBundle

SYNTH_KEY = "sk_synth_FOURTH_cccccccccccc_3333"
TOY_TOML = '[toy]\nrounds = 3\nprompt = "count the vowels"\n'


class ToyTable(ExtraModel):
    rounds: int = Field(gt=0)
    prompt: str


class ToyConfig(ExtraModel):
    toy: ToyTable


class ToyFlow(Flow):
    name = "toy"
    label = "toy"
    id_prefix = "toy_"
    endpoints = FlowEndpoints(create="/toy/jobs", status="/toy/jobs/{job_id}", events="/toy/jobs/{job_id}/events",
                              metrics="/toy/jobs/{job_id}/metrics", cancel="/toy/jobs/{job_id}/cancel")
    required_secrets = (SYNTH_API_KEY,)
    honoured_overrides = frozenset({"backend", "idempotency"})
    ignored_overrides = MappingProxyType({"model": "toy jobs have no model"})
    config_model = ToyConfig
    detect_hint = "[toy] with rounds and prompt (toy)"
    chart = ChartSpec(title="Toy score", xlabel="round", ylabel="score",
                      series=(SeriesSpec("score", "toy score", frozenset({"toy.score"}), higher_is_better=True),))
    noise_event_types = frozenset({"toy.tick"})

    def claims(self, raw: Mapping[str, Any]) -> bool:
        return "toy" in raw

    def check(self, model: Any, raw: Mapping[str, Any]) -> list[Problem]:
        problems = []
        if model.toy.rounds > 10:
            problems.append(Problem(("toy", "rounds"), "at most 10 rounds", "set rounds = 10 or fewer"))
        if model.toy.rounds == 1:
            problems.append(warning("a single round shows no curve"))
        return problems

    def build_plan(self, config: ConfigLike, overrides: Overrides, secrets: SecretBundle) -> Plan:
        warnings = [*config.warnings, *overrides.ignored_by(self)]
        body = {"rounds": config.raw["toy"]["rounds"], "prompt": config.raw["toy"]["prompt"],
                "api_key": secrets.secret_value(SYNTH_API_KEY)}
        step = Step("POST", self.endpoints.create, body, headers={"Idempotency-Key": overrides.idempotency or "toy-1"},
                    description="create the toy job")
        return Plan(flow=self.name,
                    endpoints=self.endpoints, algorithm=None, steps=[step], config_path=config.path,
                    backend_url=overrides.backend or "", warnings=warnings, secrets=secrets.values())

    def artifacts(self, job: FinishedJob) -> Artifact:
        best = max((m.value for m in job.metrics if m.name == "toy.score"), default=None)
        return Artifact(title=f"Toy result: {job.id}", markdown=f"### Toy `{job.id}`: best score {best}")


@dataclass
class ToyJob:
    """The little a flow reads from a finished job."""

    id: str = "toy_42"
    flow: str = "toy"
    status: str = "succeeded"
    status_doc: dict[str, Any] = field(default_factory=lambda: {"status": "succeeded"})
    events: list[Event] = field(default_factory=list)
    metrics: list[MetricPoint] = field(default_factory=list)


@pytest.fixture()
def toy() -> Iterator[Flow]:
    with registered(ToyFlow()) as flow:
        yield flow
    assert "toy" not in flow_names()


@pytest.fixture()
def toy_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYNTH_API_KEY", SYNTH_KEY)
    path = tmp_path / "toy.toml"
    path.write_text(TOY_TOML)
    return path


def test_the_registry_knows_it_only_while_registered(toy: Flow) -> None:
    assert get_flow("toy") is toy and flow_names()[-1] == "toy"
    with pytest.raises(ConfigError, match="already registered"), registered(ToyFlow()):
        pass
    assert get_flow("toy") is toy


def test_its_configs_are_detected_and_validated(toy: Flow, toy_toml: Path) -> None:
    loaded = load_config(toy_toml)
    assert loaded.flow == "toy" and loaded.algorithm is None and loaded.results_folder is None
    assert load_config_text(TOY_TOML.replace("3", "1"), toy_toml).warnings == ["a single round shows no curve"]
    with pytest.raises(ConfigError, match="invalid toy config") as info:
        load_config_text(TOY_TOML.replace("3", "11"), toy_toml)
    assert info.value.problems[0].key == "toy.rounds"
    with pytest.raises(ConfigError) as info:
        load_config_text("[other]\nx = 1\n", toy_toml)
    assert "toy" in str(info.value) and "[toy] with rounds and prompt (toy)" in (info.value.hint or "")


def test_train_dry_run_prints_its_plan_with_the_key_masked(toy: Flow, toy_toml: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--config", str(toy_toml), "--dry-run", "--model", "Qwen/Qwen3-4B"]) == 0
    out = capsys.readouterr().out
    assert "flow:      toy" in out and "POST /toy/jobs" in out and "count the vowels" in out
    assert "--model is ignored for toy jobs: toy jobs have no model" in out
    assert SYNTH_KEY not in out and SYNTH_KEY[-4:] in out


def test_train_dry_run_json_is_the_public_plan_document(toy: Flow, toy_toml: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--config", str(toy_toml), "--dry-run", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["flow"] == "toy" and doc["algorithm"] is None
    (step,) = doc["steps"]
    assert step["method"] == "POST" and step["path"] == "/toy/jobs"
    assert step["body"]["rounds"] == 3 and step["body"]["api_key"] != SYNTH_KEY


def test_the_notebook_text_preview_shows_it(toy: Flow, toy_toml: Path) -> None:
    target = pipeline.resolve_target("http://127.0.0.1:9", start_local=False)
    overrides = pipeline.build_overrides({}, target)
    prepared = pipeline.prepare(toy_toml, overrides=overrides, target=target, sources=pipeline.SecretSources())
    assert prepared.ok, prepared.error
    text = preview_text([prepared], backend_url=target.url)
    assert "== toy.toml  (toy)" in text and '"path": "/toy/jobs"' in text
    assert SYNTH_KEY not in text


def test_the_live_chart_draws_its_series_and_noise_is_its_own(toy: Flow) -> None:
    chart = LiveChart("toy")
    assert chart.add_metric(MetricPoint(name="toy.score", step=1, value=0.25))
    assert chart.add_metric(MetricPoint(name="toy.score", step=2, value=0.5))
    assert not chart.add_metric(MetricPoint(name="train.loss", step=1, value=1.0))
    assert chart.render_png().startswith(b"\x89PNG")
    assert "toy score" in chart.text_table() and chart.chart_title() == "Toy score"
    assert toy.is_noise(Event(seq=1, type="toy.tick"))
    assert not toy.is_noise(Event(seq=2, type="toy.tick", level="error"))
    assert toy.is_noise(Event(seq=3, type="toy.heartbeat"))


def test_its_artifact_is_rendered_and_it_writes_no_results(toy: Flow, tmp_path: Path) -> None:
    job = ToyJob(metrics=[MetricPoint(name="toy.score", step=1, value=0.5)])
    bundle = artifacts.artifact_bundle(job)
    assert bundle == {"text/markdown": "### Toy `toy_42`: best score 0.5",
                      "text/plain": "### Toy `toy_42`: best score 0.5"}
    assert artifacts.export_summary(job, tmp_path) == [] and not toy.has_summary
