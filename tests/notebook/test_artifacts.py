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
    assert bundle["text/plain"].startswith("# Prompt-learning summary: `pl_abc`")
    assert "| Best | 0.7500 |" in bundle["text/plain"]
    # the same Markdown, in a block Jupyter's MathJax leaves alone (a ``$`` the backend sent stays a ``$``)
    assert bundle["text/markdown"] == f"<div class='mathjax_ignore'>\n\n{bundle['text/plain'].strip()}\n\n</div>"


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


def test_rl_status_json_is_masked_pretty_folded_and_downloadable(tmp_path) -> None:
    job = FakeJob("rl", job_id="rl_1")
    job.finish("succeeded", config={"api_key": CANARY, "steps": 3})
    bundle = artifacts.artifact_bundle(job)
    assert bundle is not None and CANARY not in json.dumps(bundle)
    href = re.search(r"href='data:application/json;base64,([^']+)'", bundle["text/html"])
    assert href is not None
    doc = json.loads(base64.b64decode(href.group(1)))
    assert doc["status"] == "succeeded" and doc["config"]["steps"] == 3
    assert "download='rl_1_status.json'" in bundle["text/html"]
    assert "<details><summary>rl_1_status.json (" in bundle["text/html"]  # folded below the headline
    assert bundle["text/plain"].startswith("RL result: rl_1 (succeeded)\n- the backend reported no reward")
    out = artifacts.export_status(job, tmp_path / "status.json")
    assert CANARY not in out.read_text() and json.loads(out.read_text())["status"] == "succeeded"


def test_rl_result_opens_with_a_reward_headline_from_the_metrics() -> None:
    job = FakeJob("rl", job_id="rl_2")
    for step, reward in enumerate((0.18, 0.3, 0.45, 0.6), start=1):
        job.metric("train.reward_mean", step, reward)
    for step, reward in ((2, 0.2), (4, 0.55)):
        job.metric("eval.reward_mean", step, reward)
    job.finish("succeeded", fine_tuned_model="rl:tiny:rl_2", rl={"reward_curve": [[s, 0.1] for s in range(200)]})
    bundle = artifacts.artifact_bundle(job)
    assert bundle is not None
    page = bundle["text/html"]
    facts = re.findall(r"<li>([^<]*)</li>", page)
    assert facts == ["reward 0.18 → 0.60 over 4 steps", "eval reward 0.20 → 0.55", "model rl:tiny:rl_2"]
    assert page.index("reward 0.18") < page.index("<details>")  # the headline, then the long JSON folded


def test_rl_headline_prefers_the_backends_summary_and_a_cancelled_job_names_its_checkpoint() -> None:
    job = FakeJob("rl", job_id="rl_3")
    job.metric("train.reward_mean", 1, 0.9)
    job.finish("cancelled", rl={"reward_start": 0.18, "reward_end": 0.6, "steps": 12, "eval_reward_start": 0.2,
                                "eval_reward_end": 0.5, "eval_reward_best": 0.58},
               checkpoint="/data/backend/jobs/rl_3/checkpoint")
    bundle = artifacts.artifact_bundle(job)
    assert bundle is not None
    facts = re.findall(r"<li>([^<]*)</li>", bundle["text/html"])
    assert facts == ["reward 0.18 → 0.60 over 12 steps", "eval reward 0.20 → 0.50 (best 0.58)",
                     "checkpoint kept in /data/backend/jobs/rl_3/checkpoint"]


def test_sft_lists_the_validation_file_its_example_counts_and_the_loss() -> None:
    job = FakeJob("sft", job_id="job_sft2")
    job.event("sft.data.validated", "120 training examples, 20 validation", n_train=120, n_validation=20)
    for step, loss in ((1, 2.1), (60, 0.9), (120, 0.54)):
        job.metric("train.loss", step, loss)
    job.metric("val.loss", 120, 0.61)
    job.finish("succeeded", fine_tuned_model="ft:tiny:1", training_file_id="file_train",
               metadata={"effective_config": {"data": {"validation_files": ["file_val"]}}})
    md = artifacts.artifact_bundle(job)["text/markdown"]  # type: ignore[index]
    assert "| training | `file_train` | 120 |" in md and "| validation | `file_val` | 20 |" in md
    assert "- train loss 2.10 → 0.54 over 120 steps; validation loss 0.61" in md


def test_a_cancelled_sft_job_says_where_its_checkpoint_is() -> None:
    job = FakeJob("sft", job_id="job_sft3")
    job.event("sft.training.cancelled", "Cancelled at step 3/10", checkpoint="/data/backend/jobs/job_sft3/checkpoint")
    job.finish("cancelled", training_file_id="file_train")
    md = artifacts.artifact_bundle(job)["text/markdown"]  # type: ignore[index]
    assert "- checkpoint kept in /data/backend/jobs/job_sft3/checkpoint" in md and "Model id" not in md


def test_export_results_writes_into_the_jobs_own_folder_and_links_it(tmp_path) -> None:
    job = _pl_job()
    written = artifacts.export_results(job, tmp_path / "results")
    assert written == [tmp_path / "results" / "pl_abc" / "summary.md",
                       tmp_path / "results" / "pl_abc" / "summary_curve.png"]
    bundle = artifacts.export_bundle(written, tmp_path)
    assert bundle["text/markdown"] == ("**Written** to `results/pl_abc/`: [summary.md](results/pl_abc/summary.md), "
                                       "[summary_curve.png](results/pl_abc/summary_curve.png)")
    assert bundle["text/plain"] == "Wrote summary.md and summary_curve.png to results/pl_abc/"


def test_export_without_a_known_folder_uses_results_in_the_working_directory(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    written = artifacts.export_results(_pl_job(), None)
    assert written[0].resolve() == tmp_path / "results" / "pl_abc" / "summary.md"


def test_export_names_only_the_files_it_wrote_beside_the_jobs_other_files(tmp_path) -> None:
    (tmp_path / "pl_abc").mkdir()
    (tmp_path / "pl_abc" / "run.json").write_text("{}")  # the job's run record, written at submission
    written = artifacts.export_results(_pl_job(), tmp_path)
    assert [p.name for p in written] == ["summary.md", "summary_curve.png"]
    assert [p.name for p in artifacts.export_results(_pl_job(), tmp_path)] == ["summary.md", "summary_curve.png"]


def test_the_panels_line_says_where_a_jobs_bundle_was_written(tmp_path) -> None:
    """A flow without result files of its own still leaves its bundle: the row says where."""
    from synth_nb.job.results import Results

    folder = tmp_path / ".synth_nb" / "runs" / "job_sft1"
    links, said = artifacts.results_bundle(Results(folder, bundle=folder), tmp_path)
    assert said == "Wrote the job's bundle to .synth_nb/runs/job_sft1/"
    assert links == {"text/markdown": "**Wrote the job's bundle to** `.synth_nb/runs/job_sft1/`", "text/plain": said}
    _, earlier = artifacts.results_bundle(Results(folder, bundle=folder, earlier=True), tmp_path)
    assert earlier == "Its bundle is in .synth_nb/runs/job_sft1/"
