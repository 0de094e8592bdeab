from __future__ import annotations

import json
import threading

import pytest

from synth_nb.local.errors import ExecutorInputError, TrainingFailed
from synth_nb.local.executors.sft import SftExecutor, sft_settings
from synth_nb.local.training.model_choice import choose_model

from .fakes import FakeContext, cancel_once, write_chat_jsonl


def _context(tmp_path, hyperparameters, *, validation=False, model="Qwen/Qwen3-0.6B", lines=24, **metadata):
    ctx = FakeContext("sft", {}, tmp_path)
    train_id = ctx.add_file(write_chat_jsonl(tmp_path / "train.jsonl", lines))
    effective = {"data": {"validation_files": [ctx.add_file(write_chat_jsonl(tmp_path / "val.jsonl", 6))]}} \
        if validation else {}
    ctx.body = {"model": model, "training_file_id": train_id, "hyperparameters": hyperparameters,
                "training_type": "sft_offline", "metadata": {"effective_config": effective, **metadata}}
    return ctx


@pytest.mark.torch
def test_tiny_model_learns_and_reports_0224_events_metrics_and_artifact(tmp_path):
    ctx = _context(tmp_path, {"n_epochs": 1, "batch_size": 8, "max_steps": 40, "eval_steps": 20,
                              "learning_rate": 3e-3}, validation=True)
    SftExecutor().run(ctx)
    types = ctx.event_types()
    for expected in ("sft.data.validated", "sft.training.started", "sft.progress", "sft.validation.summary",
                     "sft.training.finish", "sft.job.completed"):
        assert expected in types
    selected = ctx.events[0]
    assert selected["type"] == "sft.model.selected" and selected["data"]["source"] == "tiny"
    assert "never downloads" in selected["message"]
    started = next(e for e in ctx.events if e["type"] == "sft.training.started")
    assert started["data"]["model_kind"] == "tiny" and "never downloads" in started["message"]
    assert started["data"]["device"] == "cpu" and started["data"]["trainer"] == "synth-nb loop"
    losses = ctx.series("train.loss")
    assert [m["step"] for m in ctx.metrics if m["name"] == "train.loss"] == list(range(1, 41))
    assert losses[-1] < 0.5 * losses[0]
    val = ctx.series("val.loss")
    assert len(val) == 2 and val[-1] < val[0]
    progress = [e for e in ctx.events if e["type"] == "sft.progress"][-1]["data"]
    assert progress["step"] == progress["total_steps"] == 40
    assert ctx.result["fine_tuned_model"] == f"ft:synth-nb-tiny-gpt2:{ctx.job_id}"
    assert (ctx.work_dir / "model" / "model.safetensors").is_file()
    assert any(f["path"] == "model/model.safetensors" for f in ctx.result["files"])
    assert 0 < ctx.result["worker_peak_rss_mb"] < 4096
    samples = [e["data"] for e in ctx.events if e["type"] == "sft.sample.generated"]
    assert [(d["step"], d["example"]) for d in samples] == [(s, k) for s in (0, 20, 40) for k in range(3)]
    assert all(d["source"] == "validation" and d["reference"] and 0 <= d["similarity"] <= 1 for d in samples)
    assert samples[0]["prompt"].startswith("system: ") and samples[0]["prompt"] == samples[-3]["prompt"]  # fixed
    assert [d["reference"] for d in samples[:3]] == [d["reference"] for d in samples[-3:]]
    assert sum(d["similarity"] for d in samples[-3:]) > sum(d["similarity"] for d in samples[:3])  # it learned


@pytest.mark.torch
def test_local_model_folder_is_fine_tuned_with_lora(tmp_path):
    from synth_nb.local.training.models import load_model, save_model

    base = tmp_path / "base-model"
    save_model(load_model(choose_model(None)), base, {"description": "test base"})
    ctx = _context(tmp_path, {"n_epochs": 1, "batch_size": 4, "max_steps": 3, "train_kind": "peft"},
                   model=str(base))
    ctx.body["metadata"]["effective_config"]["training"] = {"mode": "lora", "lora": {"r": 4, "alpha": 8}}
    SftExecutor().run(ctx)
    started = next(e for e in ctx.events if e["type"] == "sft.training.started")
    assert started["data"]["model_kind"] == "local"
    assert "LoRA r=4 alpha=8" in started["data"]["model"]
    assert started["data"]["trainable_params"] < started["data"]["n_params"] / 5
    assert ctx.result["fine_tuned_model"].startswith("peft:")
    assert (ctx.work_dir / "model" / "adapter_config.json").is_file()


@pytest.mark.torch
def test_cancellation_stops_training_and_keeps_a_checkpoint(tmp_path):
    ctx = _context(tmp_path, {"batch_size": 4, "max_steps": 100000})
    cancel_once(SftExecutor().run, ctx, lambda: bool(ctx.series("train.loss")))
    assert "sft.training.cancelled" in ctx.event_types()
    assert "sft.job.completed" not in ctx.event_types()
    assert (ctx.work_dir / "checkpoint" / "model.safetensors").is_file()
    assert ctx.result["checkpoint_step"] >= 1


@pytest.mark.torch
def test_an_error_inside_the_worker_fails_the_job_with_the_traceback_in_an_event(tmp_path):
    ctx = _context(tmp_path, {"max_steps": 2, "sequence_length": 8})  # replies start after token 8
    with pytest.raises(TrainingFailed, match="raise hyperparameters.sequence_length"):
        SftExecutor().run(ctx)
    event = next(e for e in ctx.events if e["type"] == "sft.worker.error")
    assert event["level"] == "error"
    assert "Traceback" in event["data"]["detail"]


@pytest.mark.torch
def test_a_worker_over_its_memory_limit_is_stopped_and_the_job_fails(tmp_path):
    ctx = _context(tmp_path, {"max_steps": 1000}, local_training={"memory_limit_mb": 30})
    with pytest.raises(TrainingFailed, match="more than 30 MB"):
        SftExecutor().run(ctx)
    assert "sft.worker.error" in ctx.event_types()


def test_empty_dataset_fails_fast_before_any_worker_starts(tmp_path):
    ctx = _context(tmp_path, {})
    ctx.files[ctx.body["training_file_id"]].write_text("")
    with pytest.raises(TrainingFailed, match="no SFT examples"):
        SftExecutor().run(ctx)
    assert ctx.event_types() == ["sft.model.selected", "sft.data.invalid"]
    assert not (ctx.work_dir / "worker.log").exists()


def test_dataset_where_every_line_is_invalid_fails_fast(tmp_path):
    ctx = _context(tmp_path, {})
    ctx.files[ctx.body["training_file_id"]].write_text('{"prompt": "a"}\nnot json\n')
    with pytest.raises(TrainingFailed, match="none of its 2 lines"):
        SftExecutor().run(ctx)
    assert ctx.events[1]["level"] == "error" and "line 2" in ctx.events[1]["message"]


def test_unknown_file_id_fails_with_a_clear_event(tmp_path):
    ctx = _context(tmp_path, {})
    ctx.body["training_file_id"] = "file_missing"
    with pytest.raises(TrainingFailed, match="file_missing is not on this backend"):
        SftExecutor().run(ctx)


@pytest.mark.parametrize(("body", "message"), [
    ({"model": "x"}, "training_file_id is required"),
    ({"training_file_id": "f", "model": "./no/such/model"}, "looks like a local path but does not exist"),
    ({"training_file_id": "f", "hyperparameters": {"batch_size": 0}}, "hyperparameters.batch_size must be > 0"),
    ({"training_file_id": "f", "hyperparameters": {"learning_rate": "fast"}}, "hyperparameters.learning_rate must be a number"),
    ({"training_file_id": "f", "metadata": {"local_training": {"threads": 1.5}}}, "local_training.threads must be an integer"),
])
def test_validate_rejects_bad_bodies_at_create_time(body, message):
    with pytest.raises(ExecutorInputError, match=message):
        SftExecutor().validate("sft", body)


def test_settings_follow_the_0224_payload():
    body = {"training_file_id": "f", "hyperparameters": {"n_epochs": 2, "per_device_batch": 4, "learning_rate": 1e-4,
                                                         "eval_steps": 25, "warmup_ratio": 0.1, "lora_rank": 16},
            "metadata": {"effective_config": {"training": {"validation": {"enabled": False}}}}}
    settings = sft_settings(body, choose_model(None))
    assert settings["n_epochs"] == 2 and settings["batch_size"] == 4 and settings["learning_rate"] == 1e-4
    assert settings["eval_steps"] == 25 and settings["validation_enabled"] is False
    assert settings["lora"] == {"r": 16, "alpha": 16, "dropout": 0.0, "target_modules": None}
    assert sft_settings({"training_file_id": "f"}, choose_model(None))["learning_rate"] == 3e-3
    assert json.dumps(settings)


@pytest.mark.torch
def test_an_sft_job_runs_end_to_end_on_the_real_local_backend(tmp_path, monkeypatch, capsys):
    import httpx

    from synth_nb.local import start_backend

    with start_backend() as backend:
        monkeypatch.setenv("SYNTH_API_KEY", backend.api_key)
        monkeypatch.chdir(tmp_path)
        http = httpx.Client(base_url=backend.url + "/api", headers={"Authorization": f"Bearer {backend.api_key}"},
                            timeout=30)
        path = write_chat_jsonl(tmp_path / "train.jsonl", 12)
        with open(path, "rb") as fh:
            file_id = http.post("/files", files={"file": (path.name, fh, "application/jsonl")},
                                data={"purpose": "fine-tune"}).json()["id"]
        body = {"model": "Qwen/Qwen3-0.6B", "training_type": "sft_offline", "training_file_id": file_id,
                "hyperparameters": {"n_epochs": 1, "batch_size": 4, "max_steps": 4}}
        job_id = http.post("/learning/jobs", json=body).json()["id"]
        http.post(f"/learning/jobs/{job_id}/start").raise_for_status()
        doc: dict = {}
        while doc.get("status") not in ("succeeded", "failed", "cancelled"):
            assert http.get("/health").status_code == 200  # the server answers while the worker trains
            doc = http.get(f"/learning/jobs/{job_id}").json()
            threading.Event().wait(0.3)
        assert doc["status"] == "succeeded", doc.get("error")
        assert doc["fine_tuned_model"] == f"ft:synth-nb-tiny-gpt2:{job_id}"
        points = http.get(f"/learning/jobs/{job_id}/metrics").json()["points"]
        assert [p["step"] for p in points if p["name"] == "train.loss"] == [1, 2, 3, 4]
        events = http.get(f"/learning/jobs/{job_id}/events").json()["events"]
        assert "sft.job.completed" in [e["type"] for e in events]
        _the_sample_views_read_the_samples(backend, job_id, capsys)


def _the_sample_views_read_the_samples(backend, job_id, capsys):
    """``job.samples()`` and ``synth-nb attach --samples`` over HTTP: step 0 and the last step, 3 prompts each."""
    import asyncio

    from synth_nb.cli.main import main
    from synth_nb.client import AsyncSynthClient
    from synth_nb.flows import get_flow
    from synth_nb.job import Job

    async def rebuilt():
        client = AsyncSynthClient(backend.url + "/api", backend.api_key)
        job = Job(job_id, "sft", client, endpoints=get_flow("sft").endpoints)
        await job.refresh()
        await client.aclose()
        return job

    job = asyncio.run(rebuilt())
    table = job.samples()
    assert table.summary_line() == f"SFT samples of job {job_id}: 6 sampled, steps 0–4"
    assert [(r["step"], r["example"], r["source"]) for r in table.rows] == [(s, k, "train") for s in (0, 4)
                                                                            for k in range(3)]
    assert "<details>" in table.to_html() and "reference" in table.to_html()
    assert len(job.samples_df(4)) == 3
    capsys.readouterr()
    assert main(["attach", job_id, "--backend", backend.url, "--samples", "--step", "4"]) == 0
    out = capsys.readouterr().out
    assert "6 sampled, steps 0–4; 3 shown (step 4)" in out and out.count("  reference ") == 3
