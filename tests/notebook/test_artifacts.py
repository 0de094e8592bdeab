"""Artifacts of finished jobs, rendered through their flow: PL summary + export, SFT model id and files,
RL status JSON (masked and downloadable)."""

from __future__ import annotations

import base64
import json
import re

from _fake_job import FakeJob

from synth_nb.flows.sft.artifacts import fine_tuned_model
from synth_nb.notebook import artifacts

CANARY = "sk-canary-0123456789abcdefXYZ9"


def _pl_job() -> FakeJob:
    job = FakeJob("prompt_learning", job_id="pl_abc", algorithm="gepa")
    for step, score in ((4, 0.5), (8, 0.75)):
        job.metric("gepa.trial.score", step, score)
    job.event("prompt.learning.trial.results", mean=0.5)
    job.finish("succeeded", best_score=0.75)
    return job


def test_prompt_learning_bundle_is_the_summary_markdown() -> None:
    bundle = artifacts.artifact_bundle(_pl_job())
    assert bundle is not None
    assert bundle["text/markdown"].startswith("# Prompt-learning summary: `pl_abc`")
    assert "| Best | 0.7500 |" in bundle["text/markdown"] and bundle["text/plain"] == bundle["text/markdown"]


def test_export_summary_writes_markdown_and_its_curve(tmp_path) -> None:
    written = artifacts.export_summary(_pl_job(), tmp_path)
    assert written == [tmp_path / "summary.md"]
    assert "![optimisation curve](summary_curve.png)" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "summary_curve.png").read_bytes().startswith(b"\x89PNG")


def test_flows_without_results_export_nothing(tmp_path) -> None:
    assert artifacts.export_summary(FakeJob("rl"), tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_sft_bundle_names_the_model_and_files() -> None:
    job = FakeJob("sft", job_id="job_sft")
    job.event("sft.job.completed", fine_tuned_model="ft:Qwen3-0.6B:local:1")
    job.finish("succeeded", training_file="file_train", validation_file_id="file_val")
    bundle = artifacts.artifact_bundle(job)
    assert bundle is not None
    md = bundle["text/markdown"]
    assert "ft:Qwen3-0.6B:local:1" in md and "`file_train`" in md and "`file_val`" in md


def test_sft_model_id_prefers_the_status_document() -> None:
    job = FakeJob("sft")
    job.event("x", fine_tuned_model="from-event")
    assert fine_tuned_model(job) == "from-event"
    job.status_doc["fine_tuned_model"] = "from-status"
    assert fine_tuned_model(job) == "from-status"
    assert fine_tuned_model(FakeJob("sft")) is None


def test_rl_status_json_is_masked_pretty_and_downloadable(tmp_path) -> None:
    job = FakeJob("rl", job_id="rl_1")
    job.finish("succeeded", config={"api_key": CANARY, "steps": 3})
    bundle = artifacts.artifact_bundle(job)
    assert bundle is not None and CANARY not in json.dumps(bundle)
    href = re.search(r"href='data:application/json;base64,([^']+)'", bundle["text/html"])
    assert href is not None
    doc = json.loads(base64.b64decode(href.group(1)))
    assert doc["status"] == "succeeded" and doc["config"]["steps"] == 3
    assert "download='rl_1_status.json'" in bundle["text/html"]
    assert bundle["text/plain"].startswith("Final status of rl_1:\n")
    out = artifacts.export_status(job, tmp_path / "status.json")
    assert CANARY not in out.read_text() and json.loads(out.read_text())["status"] == "succeeded"
