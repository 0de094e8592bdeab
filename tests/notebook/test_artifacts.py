"""Artifacts of finished jobs: PL summary + export, SFT model id and files, RL status JSON (masked)."""

from __future__ import annotations

import base64
import json
import re
import sys
import types
from dataclasses import dataclass

import pytest
from _fake_job import FakeJob

from synth_nb.notebook import artifacts

CANARY = "sk-canary-0123456789abcdefXYZ9"


@dataclass
class Summary:
    markdown: str
    curve_png: bytes | None


@pytest.fixture()
def summary_module(monkeypatch):
    """Stand-in for synth_nb.summary.prompt_learning with the contract's signature."""
    calls: list[dict] = []
    mod = types.ModuleType("synth_nb.summary.prompt_learning")

    def render_summary(status_doc, events, metrics, *, job_id, out_dir=None):
        calls.append({"status_doc": status_doc, "events": events, "metrics": metrics, "job_id": job_id})
        return Summary(markdown=f"# Prompt learning {job_id}\n\nBest score 0.75\n", curve_png=None)

    mod.render_summary = render_summary  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "synth_nb.summary.prompt_learning", mod)
    return calls


def _pl_job() -> FakeJob:
    job = FakeJob("prompt_learning", job_id="pl_abc", algorithm="gepa")
    job.event("prompt.learning.trial.results", mean=0.5)
    job.finish("succeeded")
    return job


def test_prompt_learning_bundle_is_the_rendered_markdown(summary_module) -> None:
    bundle = artifacts.artifact_bundle(_pl_job())
    assert bundle is not None and bundle["text/markdown"].startswith("# Prompt learning pl_abc")
    (call,) = summary_module
    assert call["job_id"] == "pl_abc" and len(call["events"]) == 1


def test_export_summary_writes_markdown_and_curve_next_to_it(summary_module, tmp_path) -> None:
    written = artifacts.export_summary(_pl_job(), tmp_path, chart_png=b"\x89PNGfake")
    assert [p.name for p in written] == ["summary.md", "summary_curve.png"]
    text = (tmp_path / "summary.md").read_text()
    assert "Best score 0.75" in text and "![optimisation curve](summary_curve.png)" in text
    assert (tmp_path / "summary_curve.png").read_bytes() == b"\x89PNGfake"


def test_export_summary_to_a_named_file_without_curve(summary_module, tmp_path) -> None:
    written = artifacts.export_summary(_pl_job(), tmp_path / "out" / "gepa.md")
    assert written == [tmp_path / "out" / "gepa.md"]


def test_sft_bundle_names_the_model_and_files() -> None:
    job = FakeJob("sft", job_id="job_sft")
    job.event("sft.job.completed", fine_tuned_model="ft:Qwen3-0.6B:local:1")
    job.finish("succeeded", training_file="file_train", validation_file_id="file_val")
    md = artifacts.artifact_bundle(job)["text/markdown"]
    assert "ft:Qwen3-0.6B:local:1" in md and "`file_train`" in md and "`file_val`" in md


def test_sft_model_id_prefers_the_status_document() -> None:
    job = FakeJob("sft")
    job.event("x", fine_tuned_model="from-event")
    job.status_doc["fine_tuned_model"] = "from-status"
    assert artifacts.fine_tuned_model(job) == "from-status"
    assert artifacts.fine_tuned_model(FakeJob("sft")) is None


def test_rl_status_json_is_masked_pretty_and_downloadable(tmp_path) -> None:
    job = FakeJob("rl", job_id="rl_1")
    job.finish("succeeded", config={"api_key": CANARY, "steps": 3})
    bundle = artifacts.artifact_bundle(job)
    assert CANARY not in json.dumps(bundle)
    href = re.search(r"href='data:application/json;base64,([^']+)'", bundle["text/html"])
    assert href is not None
    doc = json.loads(base64.b64decode(href.group(1)))
    assert doc["status"] == "succeeded" and doc["config"]["steps"] == 3
    assert "download='rl_1_status.json'" in bundle["text/html"]
    out = artifacts.export_status(job, tmp_path / "status.json")
    assert CANARY not in out.read_text() and json.loads(out.read_text())["status"] == "succeeded"
