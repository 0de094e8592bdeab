"""A fourth flow goes through every layer: detection and validation, ``synth-nb train --dry-run`` (text and
JSON) and ``--check``, ``synth-nb attach --flow``, the wizard's fields, the notebook's text preview, the
live chart, noise and the artifacts, and a flag of its own (``--rounds``).

The flow follows the real recipe: its folder (``toy_flow/``) and one registry line (``registered(FLOW)``).
Nothing else knows about it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from synth_nb import pipeline
from synth_nb.cli.main import main
from synth_nb.config import load_config, load_config_text
from synth_nb.errors import ConfigError
from synth_nb.flows import Flow, flow_names, get_flow, registered
from synth_nb.flows.override_rows import OverrideRow
from synth_nb.notebook import artifacts
from synth_nb.notebook.chart import LiveChart
from synth_nb.pipeline.preview import preview_text
from synth_nb.records import Event, MetricPoint

from .toy_flow import FLOW, ToyFlow

SYNTH_KEY = "sk_synth_FOURTH_cccccccccccc_3333"
TOY_TOML = '[toy]\nrounds = 3\nprompt = "count the vowels"\n'


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
    with registered(FLOW) as flow:  # the one registry line
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
    prepared = pipeline.prepare_config(toy_toml, overrides=overrides, target=target, sources=pipeline.SecretSources())
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
    assert bundle == {"text/markdown": "<div class='mathjax_ignore'>\n\n### Toy `toy_42`: best score 0.5\n\n</div>",
                      "text/plain": "### Toy `toy_42`: best score 0.5"}
    assert artifacts.export_summary(job, tmp_path) == [] and not toy.has_summary


def test_its_own_flag_replaces_its_config_key_only_while_registered(toy: Flow, toy_toml: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "toy.toml", "--dry-run", "--json", "--rounds", "5"]) == 0
    (step,) = json.loads(capsys.readouterr().out)["steps"]
    assert step["body"]["rounds"] == 5
    assert main(["train", "toy.toml", "--dry-run", "--rounds", "0"]) == 2
    assert "--rounds 0: must be at least 1" in capsys.readouterr().err
    with registered(OtherToy()):  # another flow's own flag exists; on a toy config alone it would change nothing
        assert main(["train", "toy.toml", "--dry-run", "--laps", "2"]) == 2
    assert "--laps applies to " in capsys.readouterr().err


def test_without_it_the_flag_does_not_exist(toy_toml: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["train", "toy.toml", "--dry-run", "--rounds", "5"])
    assert info.value.code == 2 and "unrecognized arguments: --rounds" in capsys.readouterr().err


def test_the_wizard_offers_only_the_fields_it_honours(toy: Flow, toy_toml: Path) -> None:
    from synth_nb.notebook.wizard import Wizard

    wizard = Wizard(toy_toml.parent, environ={"SYNTH_API_KEY": SYNTH_KEY}, backend="http://127.0.0.1:9")
    assert wizard.selected == ["toy.toml"]
    fields = {f["name"]: f for f in wizard.override_fields}
    assert sorted(fields) == ["idempotency", "rounds"]  # no Model: toy jobs have none
    assert fields["rounds"]["label"] == "Rounds" and fields["rounds"]["type"] == "int"
    assert fields["rounds"]["prefill"] == "3"
    wizard.overrides = {**wizard.overrides, "rounds": "7"}
    wizard._recompute()
    assert '"rounds": 7' in wizard.previews[0]["preview"] and wizard.can_submit
    wizard.overrides = {**wizard.overrides, "rounds": "zero"}
    wizard._recompute()
    assert "whole number" in wizard.override_errors["rounds"] and not wizard.can_submit


def test_check_shows_its_card_and_sends_nothing(toy: Flow, toy_toml: Path, fake_backend: Any,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SYNTH_API_KEY", fake_backend.api_key)
    code = main(["train", "toy.toml", "--check", "--rounds", "4", "--backend", fake_backend.url])
    out = capsys.readouterr().out
    assert code == 0 and "pre-flight check: toy.toml [toy]" in out and "verdict: ready (no job was sent)" in out
    assert fake_backend.api_key not in out
    assert not fake_backend.state.jobs


def test_attach_with_flow_follows_a_job_the_registry_does_not_know(toy: Flow, toy_toml: Path, fake_backend: Any,
                                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SYNTH_API_KEY", fake_backend.api_key)
    assert main(["train", "toy.toml", "--rounds", "2", "--backend", fake_backend.url, "--no-poll"]) == 0
    job_id = capsys.readouterr().out.strip().splitlines()[-1]
    assert fake_backend.job(job_id).body["rounds"] == 2
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no registry here: the flow comes from --flow
    assert main(["attach", job_id, "--flow", "toy", "--backend", fake_backend.url]) == 0
    out = capsys.readouterr().out
    assert f"attached to toy job {job_id}" in out and fake_backend.api_key not in out
    assert any(path == f"/api/toy/jobs/{job_id}" for _, path, _ in fake_backend.state.requests)


class OtherToy(ToyFlow):
    """Another flow with a flag of its own, to show flags stay with their flow."""

    name = "toy2"
    label = "toy 2"
    override_rows = (OverrideRow("laps", "--laps", "int", "Toy 2: laps.", "Laps", keys=(("toy2", "laps"),)),)

    def claims(self, raw: Mapping[str, Any]) -> bool:
        return "toy2" in raw
