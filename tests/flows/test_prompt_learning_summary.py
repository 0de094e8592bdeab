"""summary.md for prompt-learning jobs: content, curve, files and secret masking."""

from __future__ import annotations

from synth_nb.flows.prompt_learning.summary import CURVE_NAME, SUMMARY_NAME, render_summary, write_summary
from synth_nb.records import Event, MetricPoint

CANARY = "sk_env_CANARY_0123456789abcdef"
SHAPED = "sk-proj-CANARYshaped0123456789"


def _gepa_events() -> list[dict]:
    sections = [{"role": "system", "name": "system", "content": "Classify.\n\nIntents:\n- change_pin: new pin"},
                {"role": "user", "name": "user_1", "content": "Customer Query: {query}"}]
    candidates = [
        {"candidate_index": 0, "accuracy": 0.5, "prompt_length": 40, "seeds": [1, 2, 3, 4],
         "instance_scores": [1, 0, 0, 1], "parents": [], "generation": 0, "origin": "seed", "heldout_accuracy": 0.6},
        {"candidate_index": 1, "accuracy": 0.75, "prompt_length": 80, "seeds": [1, 2, 3, 4],
         "instance_scores": [1, 1, 0, 1], "parents": [0], "generation": 1, "origin": "reflection",
         "heldout_accuracy": 0.7},
    ]
    data = [
        ("prompt.learning.gepa.start", {}),
        ("prompt.learning.proposer.selected", {"proposer": "offline", "model": "offline-deterministic"}),
        ("prompt.learning.policy.ready", {"policy": "offline", "model": "offline:all-MiniLM-L6-v2",
                                          "api_key": CANARY}),
        ("prompt.learning.task_app.ready", {"task_app_url": "http://127.0.0.1:8102", "task_id": "synth-nb-banking"}),
        ("prompt.learning.trial.results", {"mean": 0.5, "completed": 4, "total": 4}),
        ("gepa.transformation.proposed", {"parent_id": 0, "transformation_text": "Classify.\nIntents: ..."}),
        ("prompt.learning.proposal.scored", {"proposal": 1, "score": 0.75, "accepted": True}),
        ("prompt.learning.progress", {"rollouts_completed": 24}),
        ("prompt.learning.validation.scored", {"accuracy": 0.6, "is_baseline": True}),
        ("prompt.learning.validation.summary", {"baseline": {"accuracy": 0.6, "seeds": [0, 1, 2, 3, 4]},
                                                "results": [{"accuracy": 0.7, "seeds": [0, 1, 2, 3, 4]}]}),
        ("prompt.learning.best.prompt", {"best_prompt": {"sections": sections}, "best_score": 0.7}),
        ("prompt.learning.final.results", {"best_score": 0.7, "attempted_candidates": candidates}),
        ("prompt.learning.completed", {"finish_reason": "budget_exhausted", "rollouts_completed": 24,
                                       "heldout_rollouts": 10, "token_count_total": 5000,
                                       "token_count_rollouts": 5000, "token_count_mutation": 0,
                                       "rollouts_per_minute": 600.0, "elapsed_seconds": 3.4, "total_usd": 0.0}),
        ("prompt.learning.billing.end", {"seconds": 3.4, "total_usd": 0.0}),
    ]
    return [{"seq": i, "type": t, "message": "", "data": d} for i, (t, d) in enumerate(data, start=1)]


def _metrics() -> list[dict]:
    return [{"name": "gepa.trial.score", "step": 8, "value": 0.5}, {"name": "gepa.trial.score", "step": 16, "value": 0.75},
            {"name": "gepa.best_score", "step": 4, "value": 0.5}, {"name": "gepa.best_score", "step": 24, "value": 0.75}]


STATUS = {"job_id": "pl_1", "algorithm": "gepa", "status": "succeeded", "created_at": "2026-01-01T00:00:00Z",
          "best_score": 0.7, "baseline_score": 0.6, "best_train_score": 0.75, "baseline_train_score": 0.5}


class _Job:
    """What ``write_summary`` reads from a job."""

    id, flow, status = "pl_1", "prompt_learning", "succeeded"
    status_doc, events, metrics = STATUS, _gepa_events(), _metrics()


def test_gepa_summary_has_every_section(tmp_path) -> None:
    summary = render_summary(STATUS, _gepa_events(), _metrics(), job_id="pl_1", link_curve=True)
    md = summary.markdown
    for text in ("`pl_1`", "| Algorithm | GEPA |", "offline:all-MiniLM-L6-v2", "offline-deterministic",
                 "http://127.0.0.1:8102", "2026-01-01T00:00:00Z", "| Baseline | 0.6000 |", "| Best | 0.7000 |",
                 "+0.1000 absolute (+10.0 points), +16.7% relative", "0.5000 → 0.7500", "**system** (`system`)",
                 "```text\nClassify.\n\nIntents:\n- change_pin: new pin\n```", "## Top candidates",
                 "1 GEPA transformations proposed, 1 accepted", "24 (+10 held-out)", "$0.0000", "10.0 rollouts/s",
                 "budget_exhausted", f"![optimisation curve]({CURVE_NAME})", "5 held-out seeds"):
        assert text in md, text
    top = next(line for line in md.splitlines() if line.startswith("| 1 |"))
    assert "| 0.7500 | 0.7000 | 80 | 0 | 1 reflection | 1 |" in top
    assert summary.curve_png is not None and summary.curve_png.startswith(b"\x89PNG")
    assert write_summary(_Job(), tmp_path) == tmp_path / SUMMARY_NAME
    assert (tmp_path / SUMMARY_NAME).read_text() == md
    assert (tmp_path / CURVE_NAME).read_bytes().startswith(b"\x89PNG")


def test_no_secrets_reach_the_summary() -> None:
    events = _gepa_events()
    events[10]["data"]["best_prompt"]["sections"][0]["content"] += f"\nkey {CANARY} and {SHAPED}"
    status = {**STATUS, "task_app_api_key": CANARY, "error": f"upstream said {SHAPED}"}
    md = render_summary(status, events, _metrics(), job_id="pl_1").markdown
    assert CANARY not in md and SHAPED not in md and "CANARY" not in md
    assert "••••" in md


def test_mipro_summary_and_record_objects() -> None:
    events = [
        Event(seq=1, type="mipro.job.started", data={}),
        Event(seq=2, type="mipro.instruction.proposed", data={"proposal_id": "p_001", "instruction_text": "Be precise."}),
        Event(seq=3, type="mipro.trial.complete", data={"minibatch_score": 0.4}),
        Event(seq=4, type="mipro.baseline.test", data={"test_score": 0.5, "seeds": [1, 2]}),
        Event(seq=5, type="prompt.learning.mipro.complete",
              data={"best_score": 0.75, "best_prompt": {"sections": [{"role": "system", "content": "Be precise."}]}}),
    ]
    metrics = [MetricPoint(name="mipro.trial.score", step=16, value=0.4),
               MetricPoint(name="mipro.best_score", step=16, value=0.5)]
    summary = render_summary({"status": "succeeded"}, events, metrics, job_id="pl_2")
    md = summary.markdown
    assert "| Algorithm | MIPRO |" in md and "| Baseline | 0.5000 |" in md and "| Best | 0.7500 |" in md
    assert "1 MIPRO instructions proposed" in md and "`p_001`" in md and "Be precise." in md
    assert summary.curve_png is not None and CURVE_NAME not in md
    # the text alone (a report's artifact) is the same, without drawing the curve
    text_only = render_summary({"status": "succeeded"}, events, metrics, job_id="pl_2", draw_curve=False)
    assert text_only.markdown == md and text_only.curve_png is None


def test_an_empty_job_still_renders() -> None:
    summary = render_summary({"status": "failed", "error": "task app unreachable"}, [], [], job_id="pl_3")
    assert "task app unreachable" in summary.markdown and summary.curve_png is None
    assert "| Best | n/a |" in summary.markdown
