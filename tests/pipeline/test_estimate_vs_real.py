"""``--check``'s estimate against the real run, for every bundled example config on the embedded backend.

Each example (as shipped; only its hand-run task-app URL points where nothing listens, so the embedded
backend's bundled copy answers) is checked with ``--check --json``, then run for real; every figure the
estimate gives is within 30 % of what the job reports at its end. A token figure the card marks as a floor
("at least", with a "not estimated" line for each part it leaves out) must be at most the real count. Wall
time is a rough figure, never compared.

All four need the torch extras: the prompt-learning examples score with the offline embedding policy, and
SFT and RL train the tiny model.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from synth_nb import pipeline
from synth_nb.backend import normalize_backend_url
from synth_nb.cli.main import main
from synth_nb.client import SynthClient
from synth_nb.flows import get_flow
from synth_nb.job import JobRegistry

pytestmark = pytest.mark.torch

EXAMPLES = Path(__file__).parents[2] / "example_notebooks"
TOLERANCE = 0.30


@pytest.fixture()
def folder(signed_in_folder: Path, monkeypatch: pytest.MonkeyPatch, shared_backend_folder: str) -> Path:
    monkeypatch.setenv("SYNTH_NB_BACKEND_DIR", shared_backend_folder)  # the session's, stopped at its end
    return signed_in_folder


def _copy_example(name: str, folder: Path) -> str:
    (folder / "configs").mkdir()
    text = (EXAMPLES / "configs" / name).read_text(encoding="utf-8")
    (folder / "configs" / name).write_text(text.replace(":8102", ":9"), encoding="utf-8")
    shutil.copytree(EXAMPLES / "data", folder / "data")  # the SFT example's paths are relative to its file
    return f"configs/{name}"


def _reported(backend: Any, folder: Path) -> dict[str, int]:
    """What the job said at its end: rollouts (search + held-out, or training + evaluation) and tokens."""
    (record,) = JobRegistry(folder).list()
    client = SynthClient(normalize_backend_url(backend.url), backend.api_key)
    try:
        events = client.get_events(get_flow(record.flow).endpoints, record.job_id, limit=5000)
    finally:
        client.close()
    by_type: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_type.setdefault(event.type, []).append(dict(event.data or {}))
    if record.flow == "prompt_learning":
        (done,) = by_type["prompt.learning.completed"]
        return {"rollouts": done["rollouts_completed"] + done["heldout_rollouts"], "tokens": done["token_count_total"]}
    if record.flow == "sft":
        (finish,) = by_type["sft.training.finish"]
        return {"tokens": finish["tokens"]}
    (completed,) = by_type["rl.train.completed"]
    rollouts = sum(step["rollouts"] for step in by_type["rl.train.step"])
    rollouts += sum(len(started["seeds"]) for started in by_type["rl.eval.started"])
    return {"rollouts": rollouts, "tokens": completed["tokens"]}


def _within(estimated: int, real: int) -> bool:
    return abs(estimated - real) <= TOLERANCE * real


@pytest.mark.parametrize("name", ["banking_gepa.toml", "banking_mipro.toml", "sft_tiny.toml", "rl_tiny.toml"])
def test_the_estimate_of_each_bundled_example_is_within_30_percent_of_its_real_run(
        name: str, folder: Path, backend: Any, capsys: pytest.CaptureFixture[str]) -> None:
    config = _copy_example(name, folder)
    pipeline.use_local_backend(backend)
    try:
        assert main(["train", "--config", config, "--backend", "local", "--check", "--json"]) == 0
        card = json.loads(capsys.readouterr().out)
        assert main(["train", "--config", config, "--backend", "local"]) == 0, capsys.readouterr().err
        real = _reported(backend, folder)
    finally:
        pipeline.stop_local_backend()
    estimate = card["estimate"]
    assert estimate["rollouts"] is not None or "rollouts" not in real
    if "rollouts" in real:
        assert _within(estimate["rollouts"], real["rollouts"]), (estimate, real)
    if estimate["tokens_floor"]:  # the card names what it leaves out, and the figure is a floor
        assert estimate["not_estimated"] and estimate["tokens"] <= real["tokens"], (estimate, real)
    else:
        assert not estimate["not_estimated"] and _within(estimate["tokens"], real["tokens"]), (estimate, real)
    assert estimate["wall_seconds"] is None or "rough" in estimate["wall_how"]
