from __future__ import annotations

import json

import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from synth_nb.local.errors import ExecutorInputError, TrainingFailed
from synth_nb.local.examples._serve import serve_in_thread
from synth_nb.local.executors.rl import DEFAULT_LR, RlExecutor, rl_settings
from synth_nb.local.training.model_choice import choose_model

from .conftest import CANARY
from .fakes import FakeContext, cancel_once


def _body(task_url, *, steps=3, batch=2, group=4, eval_seeds=(100, 101, 102, 103), every=2):
    return {"job_type": "rl", "data": {"endpoint_base_url": task_url, "base_model": "Qwen/Qwen3-0.6B", "config": {
        "model": {"base": "Qwen/Qwen3-0.6B", "trainer_mode": "full", "label": "charclass-test"},
        "rollout": {"env_name": "charclass", "policy_name": "p", "max_turns": 1, "episodes_per_batch": batch * group,
                    "max_concurrent_rollouts": 16, "policy_config": {"max_tokens": 10}},
        "training": {"num_epochs": 1, "iterations_per_epoch": steps, "batch_size": batch, "group_size": group,
                     "learning_rate": 1e-3, "max_turns": 1},
        "evaluation": {"instances": len(eval_seeds), "every_n_iters": every, "seeds": list(eval_seeds)}}}}


@pytest.mark.torch
def test_rollout_rewards_flow_into_grpo_steps_events_and_the_result(tmp_path, policy_server, charclass,
                                                                   monkeypatch):
    monkeypatch.setenv("SYNTH_NB_DEVICE", "cpu")  # the worker inherits it and trains where it says
    ctx = FakeContext("rl", _body(charclass), tmp_path, policy_server, environment_api_key=CANARY)
    RlExecutor().run(ctx)
    types = ctx.event_types()
    assert types[:2] == ["rl.model.selected", "rl.train.started"] and types[-1] == "rl.job.completed"
    assert types.count("rl.train.step") == 3 and "rl.train.completed" in types
    started = ctx.events[1]  # the device is in the job's first events, as SFT's is
    assert started["data"]["device"] == "cpu" and started["data"]["dtype"] == "float32"
    assert started["data"]["device_name"] == "CPU (asked for)" and "training on CPU (asked for): " in started["message"]
    for step in (e["data"] for e in ctx.events if e["type"] == "rl.train.step"):  # what the run-health rules read
        assert 0 < step["completion_tokens_mean"] <= 10 and step["groups"] == 2 and step["group_seeds"] == [
            2 * (step["step"] - 1), 2 * step["step"] - 1] and len(step["winning_completions"]) == 2
        assert 0 <= step["zero_variance_groups"] <= 2
    assert [e["data"]["step"] for e in ctx.events if e["type"] == "rl.eval.summary"] == [0, 2, 3]
    rewards = ctx.series("train.reward_mean")
    assert len(rewards) == 3 and all(0.0 <= r <= 1.0 for r in rewards)
    assert len(ctx.series("train.loss")) == 3 and len(ctx.series("train.kl")) == 3
    assert len(ctx.series("eval.reward_mean")) == 3
    assert policy_server.calls == 3 * 2 * 4 + 3 * 4  # every training and eval rollout called the served policy once
    sampled = [e["data"] for e in ctx.events if e["type"] == "rl.rollout.sampled"]
    train = [d for d in sampled if d["phase"] == "train"]
    assert [d["step"] for d in train] == [1] * 4 + [2] * 4 + [3] * 4  # the first group (4) of each step
    assert [d["step"] for d in sampled if d["phase"] == "eval"] == [0] * 4 + [2] * 4 + [3] * 4
    first = train[0]
    assert first["seed"] == 0 and {d["seed"] for d in train[:4]} == {0}  # one group: one seed
    assert first["prompt"].startswith("user: ") and first["prompt_chars"] == len(first["prompt"])
    assert first["completion_tokens"] >= 1 and first["turns"] == 1 and first["cut"] is False
    assert set(first["reward_components"]) == {"filled", "in_class"}  # the charclass app's parts
    group_rewards = [d["reward"] for d in train[:4]]
    assert first["group_reward_mean"] == pytest.approx(sum(group_rewards) / 4, abs=1e-5)
    assert all(d["advantage"] is not None for d in train) and all(d["advantage"] is None for d in sampled
                                                                   if d["phase"] == "eval")
    summary = ctx.result["rl"]
    assert [s for s, _ in summary["reward_curve"]] == [1, 2, 3]
    assert summary["eval_reward_start"] is not None and summary["eval_reward_end"] is not None
    assert ctx.result["fine_tuned_model"] == f"rl:synth-nb-tiny-gpt2:{ctx.job_id}"
    assert (ctx.work_dir / "model" / "model.safetensors").is_file()
    recorded = json.dumps([ctx.events, ctx.metrics, ctx.result])
    assert CANARY not in recorded and CANARY[-8:] not in recorded


@pytest.mark.torch
def test_cancellation_stops_rl_and_keeps_a_checkpoint(tmp_path, policy_server, charclass):
    ctx = FakeContext("rl", _body(charclass, steps=10000, eval_seeds=()), tmp_path, policy_server,
                      environment_api_key=CANARY)
    cancel_once(RlExecutor().run, ctx, lambda: bool(ctx.series("train.reward_mean")))
    assert "rl.train.cancelled" in ctx.event_types() and "rl.job.completed" not in ctx.event_types()
    assert (ctx.work_dir / "checkpoint" / "model.safetensors").is_file()


def _garbage_app():
    async def ok(request):
        return JSONResponse({"healthy": True})

    async def rollout(request):
        return JSONResponse({"result": "whatever"})

    return Starlette(routes=[Route("/health", ok), Route("/task_info", ok), Route("/rollout", rollout, methods=["POST"])])


@pytest.mark.torch
def test_a_task_app_answering_garbage_fails_the_job_with_a_clear_event(tmp_path, policy_server):
    with serve_in_thread(_garbage_app()) as app:
        ctx = FakeContext("rl", _body(app.url), tmp_path, policy_server, environment_api_key=CANARY)
        with pytest.raises(TrainingFailed, match="without a metrics object"):
            RlExecutor().run(ctx)
    event = next(e for e in ctx.events if e["type"] == "rl.worker.error")
    assert event["level"] == "error" and "every evaluation rollout failed" in event["message"]


def test_a_task_app_that_is_down_fails_fast_before_any_worker_starts(tmp_path, policy_server):
    with serve_in_thread(_garbage_app()) as app:
        url = app.url
    ctx = FakeContext("rl", _body(url), tmp_path, policy_server, environment_api_key=CANARY)
    with pytest.raises(TrainingFailed, match="is not reachable"):
        RlExecutor().run(ctx)
    assert ctx.event_types() == ["rl.model.selected", "rl.train.failed"]
    assert not (ctx.work_dir / "worker.log").exists()


def test_a_task_app_refusing_the_key_fails_fast_with_a_hint(tmp_path, policy_server, charclass):
    ctx = FakeContext("rl", _body(charclass), tmp_path, policy_server, environment_api_key="sk_env_wrong_key_123")
    with pytest.raises(TrainingFailed, match="check ENVIRONMENT_API_KEY"):
        RlExecutor().run(ctx)
    assert CANARY not in json.dumps(ctx.events)


@pytest.mark.parametrize(("change", "message"), [
    (lambda b: b["data"].update(endpoint_base_url=None) or b["data"]["config"].pop("services", None),
     "must be the task app's http"),
    (lambda b: b["data"]["config"]["training"].update(group_size=1), "group_size must be at least 2"),
    (lambda b: b["data"]["config"]["evaluation"].update(seeds=["a"]), "evaluation.seeds must be a list of integers"),
    (lambda b: b["data"].update(base_model="./missing/model/dir"), "looks like a local path"),
    (lambda b: b["data"]["config"]["training"].update(learning_rate=-1), "training.learning_rate must be > 0"),
])
def test_validate_rejects_bad_bodies_at_create_time(change, message):
    body = _body("http://127.0.0.1:9")
    change(body)
    with pytest.raises(ExecutorInputError, match=message):
        RlExecutor().validate("rl", body)


def test_settings_follow_the_0224_rl_payload():
    body = _body("http://127.0.0.1:9", steps=5, batch=3, group=8)
    del body["data"]["config"]["training"]["learning_rate"]
    settings = rl_settings(body, choose_model(None))
    assert settings["total_steps"] == 5 and settings["batch_size"] == 3 and settings["group_size"] == 8
    assert settings["learning_rate"] == DEFAULT_LR == 2e-4
    assert settings["eval_every"] == 2 and settings["ops"] == ["agent", "env"]
    del body["data"]["config"]["training"]["batch_size"]
    body["data"]["config"]["rollout"]["episodes_per_batch"] = 32
    assert rl_settings(body, choose_model(None))["batch_size"] == 4


@pytest.mark.torch
def test_an_rl_job_runs_end_to_end_on_the_real_local_backend(charclass):
    import time

    import httpx

    from synth_nb.local import start_backend

    with start_backend(environment_api_key=CANARY) as backend:
        http = httpx.Client(base_url=backend.url + "/api", headers={"Authorization": f"Bearer {backend.api_key}"},
                            timeout=30)
        created = http.post("/rl/jobs", json=_body(charclass, steps=2, eval_seeds=(7, 8), every=0))
        assert created.status_code in (200, 201), created.text
        job_id = created.json()["job_id"]
        doc: dict = {}
        while doc.get("status") not in ("succeeded", "failed", "cancelled"):
            doc = http.get(f"/rl/jobs/{job_id}").json()
            time.sleep(0.3)
        assert doc["status"] == "succeeded", doc.get("error")
        assert doc["fine_tuned_model"] == f"rl:synth-nb-tiny-gpt2:{job_id}"
        assert [step for step, _ in doc["rl"]["reward_curve"]] == [1, 2]
        names = {p["name"] for p in http.get(f"/rl/jobs/{job_id}/metrics").json()["points"]}
        assert {"train.reward_mean", "train.loss", "eval.reward_mean"} <= names
