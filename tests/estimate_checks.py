"""``--check``'s estimate held against what a real run of the same config reported at its end.

Shared by ``tests/pipeline/test_estimate_vs_real.py`` (the prompt-learning examples, run by the CLI) and
``tests/notebook/test_example_notebooks.py`` (the SFT and RL examples: their notebook's real run is the one
compared, so the tiny model is trained once per example, not twice). The rollouts and tokens the estimate
gives are within 30 % of what the job reports, none of them a floor, and the cost is the $0 the job reports;
wall time is an estimate said with what it was made from (for SFT and RL a dry training run of the job's
real steps), never compared (see the estimate test's docstring). A real
run is a healthy one: no run-health warning in its final block or its bundle.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx

from synth_nb.backend import normalize_backend_url
from synth_nb.client import SynthClient
from synth_nb.flows import get_flow

__all__ = ["TOLERANCE", "assert_estimate_holds", "assert_healthy", "backend_jobs", "reported", "says_zero_seconds"]

TOLERANCE = 0.30


def reported(url: str, api_key: str, flow: str, job_id: str) -> dict[str, Any]:
    """What the job said at its end: rollouts (search + held-out, or training + evaluation), tokens and,
    where it reports one, its cost."""
    client = SynthClient(normalize_backend_url(url), api_key)
    try:
        events = client.get_events(get_flow(flow).endpoints, job_id, limit=5000)
    finally:
        client.close()
    by_type: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_type.setdefault(event.type, []).append(dict(event.data or {}))
    if flow == "prompt_learning":
        (done,) = by_type["prompt.learning.completed"]
        return {"rollouts": done["rollouts_completed"] + done["heldout_rollouts"], "tokens": done["token_count_total"],
                "cost": done["total_usd"]}
    if flow == "sft":
        (finish,) = by_type["sft.training.finish"]
        return {"tokens": finish["tokens"]}
    (completed,) = by_type["rl.train.completed"]
    rollouts = sum(step["rollouts"] for step in by_type["rl.train.step"])
    rollouts += sum(len(started["seeds"]) for started in by_type["rl.eval.started"])
    return {"rollouts": rollouts, "tokens": completed["tokens"]}


def _within(estimated: int, real: int) -> bool:
    return abs(estimated - real) <= TOLERANCE * real


def assert_estimate_holds(card: dict[str, Any], real: dict[str, Any]) -> None:
    """The ``--check --json`` card's estimate against ``reported``'s figures of the real run."""
    estimate = card["estimate"]
    assert estimate["rollouts"] is not None or "rollouts" not in real
    if "rollouts" in real:
        assert _within(estimate["rollouts"], real["rollouts"]), (estimate, real)
    assert not estimate["tokens_floor"] and not estimate["not_estimated"], estimate
    assert _within(estimate["tokens"], real["tokens"]), (estimate, real)
    assert estimate["cost"] == "$0 (the embedded backend runs on this machine)" and real.get("cost", 0) == 0
    _assert_wall_time_is_said(estimate, flow=card["flow"])
    if card["flow"] in ("sft", "rl"):
        _assert_training_was_timed(card["dry_rollout"]["training"])
    else:  # the warm batches' CPU seconds, which turn a short batch's CPU seconds into wall seconds at their load
        proposal = card["dry_rollout"]["proposal"]
        assert proposal["warm_cpu_seconds"] > 0 and proposal["again_cpu_seconds"] is not None, proposal


def assert_healthy(out: str, folder: Path) -> None:
    """A bundled example's real run is a healthy one: no run-health warning in its final block or its bundle."""
    assert "\n  warning:" not in out, out[out.index("Final status:"):]
    (run,) = folder.rglob("run.json")
    assert json.loads(run.read_text(encoding="utf-8"))["health"] == []


def says_zero_seconds(wall: str) -> bool:
    """A seconds figure that is zero ("0s", "0 s", "0.0 s"), not one that ends in zero ("2.0 s", "10 s")."""
    return re.search(r"(?<![\d.])0+(\.0+)? ?s\b", wall) is not None


def backend_jobs(url: str, api_key: str) -> dict[str, int]:
    """How many jobs of each flow the backend holds, asked over HTTP (a dry run must leave them as they were)."""
    counts = {}
    for route in ("prompt-learning/online/jobs", "learning/jobs", "rl/jobs"):
        answer = httpx.get(f"{url}/api/{route}", headers={"Authorization": f"Bearer {api_key}"}, timeout=60)
        answer.raise_for_status()
        body = answer.json()
        counts[route] = len(body.get("jobs", body) if isinstance(body, dict) else body)
    return counts


def _assert_training_was_timed(training: dict[str, Any] | None) -> None:
    """The dry training run ran the job's real steps with its model loaded, and timed them."""
    assert training is not None
    assert training["model"].startswith("tiny random-init GPT-2"), training
    assert training["steps"] >= 2 and training["job_steps"] > training["steps"], training
    assert training["seconds"] > training["load_seconds"] > 0 and training["step_seconds"] > 0, training
    # the worker's CPU seconds for its start-up and the machine's load, which bound the start-up counted
    assert training["load_cpu_seconds"] > 0 and training["cores"] >= 1 and training["load_average"] >= 0, training


def _assert_wall_time_is_said(estimate: dict[str, Any], *, flow: str) -> None:
    """An estimate, never "0s", a floor or "unknown", saying what it was made from on this machine now."""
    wall = estimate["wall"]
    assert not says_zero_seconds(wall), wall
    assert estimate["wall_seconds"] > 0 and not estimate["wall_floor"], estimate
    assert "at least" not in wall and wall != "unknown", estimate
    assert estimate["wall_how"].startswith("estimate on this machine now"), estimate
    timed_by = "run once by this check" if flow == "prompt_learning" else "a dry training run of"
    assert timed_by in estimate["wall_how"] and "not timed" not in estimate["wall_how"], estimate
