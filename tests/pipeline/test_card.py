"""The pre-flight card: task app, dry rollout, data and an estimate labelled as one; never a job."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from minimal_configs import LOCAL_GEPA, MINIMAL_SFT
from shared_fixtures import ENV_KEY

from synth_nb import pipeline
from synth_nb.flows import catalogue
from synth_nb.flows.base import Workload
from synth_nb.pipeline import SecretSources, Target
from synth_nb.pipeline.card import build_card
from synth_nb.pipeline.dry_rollout import DryRollout
from synth_nb.pipeline.estimate import estimate

CHAT = '{"messages": [{"role": "user", "content": "%s"}, {"role": "assistant", "content": "%s"}]}\n'


def _card(path: Path, target: Target) -> Any:
    prepared = pipeline.prepare(path, overrides=pipeline.build_overrides({}, target), target=target,
                                sources=SecretSources())
    return build_card(prepared, target, target.own_key)


def test_prompt_learning_card_has_every_section_and_its_html_is_static(folder: Path, backend: Any,
                                                                      task_app: Any) -> None:
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=400))
    card = _card(folder / "gepa.toml", Target(f"{backend.url}/api", backend.api_key))
    assert card.ok, card.lines()
    text = "\n".join(card.lines())
    assert f"task app {task_app.url}: /health healthy (" in text and "/task_info: answered (" in text
    assert "dry rollout: seed 0 (train split) through the task app with keyword-overlap: reward " in text
    assert "estimate (from the config and one dry rollout, not a measurement):" in text
    assert "rollouts: 432 = rollout.budget 400 (reflective minibatches of 4) + held-out test_pool 16 x 2" in text
    assert "  tokens: at least ~" in text and "  not estimated: how much longer than the baseline the prompts " \
        "GEPA's proposals write are (every rollout is counted at the baseline prompt's size)" in text
    assert "cost: $0 (the embedded backend runs on this machine)" in text
    assert text.endswith("verdict: ready (nothing was sent)")
    page = card._repr_html_()
    assert "<script" not in page and "role='region'" in page and "dry rollout" in page
    assert "Customer Query: I ordered a new card" in page and "&lt;" not in card.title
    assert ENV_KEY not in text + page + json.dumps(card.to_dict(), default=str)


def test_a_dead_task_app_makes_the_card_not_ready_and_skips_the_dry_rollout(folder: Path, backend: Any) -> None:
    # a task the embedded backend does not bundle (for the bundled ones it would use its own copy)
    config = LOCAL_GEPA.format(task_url="http://127.0.0.1:9", budget=40).replace('"banking"', '"my_task"')
    (folder / "gepa.toml").write_text(config)
    card = _card(folder / "gepa.toml", Target(f"{backend.url}/api", backend.api_key))
    assert not card.ok
    assert card.task_app is not None and "cannot be reached" in (card.task_app.problem or "")
    assert card.dry is not None and card.dry.problem == "skipped: the task app is not usable"


def test_sft_card_shows_rows_tokens_and_the_validation_split(folder: Path) -> None:
    (folder / "train.jsonl").write_text("".join(CHAT % ("What is two plus two?", "Four.") for _ in range(10)))
    (folder / "val.jsonl").write_text(CHAT % ("And three plus three?", "Six."))
    (folder / "sft.toml").write_text(MINIMAL_SFT + '\n[hyperparameters]\nn_epochs = 3\n\n[data]\n'
                                     'validation_path = "val.jsonl"\n')
    card = _card(folder / "sft.toml", Target("https://backend.example/api", None))
    assert card.problem is not None and "SYNTH_API_KEY" in card.problem  # a hosted target needs its key
    target = Target("http://127.0.0.1:9/api", "sk-local-key-000000000000")  # embedded: its own key
    card = _card(folder / "sft.toml", target)
    assert card.ok and card.task_app is None and card.dry is None
    chars = 10 * len("What is two plus two?Four.")
    # tokens are counted once, in the estimate (two counts side by side read as a contradiction)
    assert card.facts == ("training data: train.jsonl, 10 rows", "validation split: val.jsonl, 1 rows (not trained on)")
    # the embedded backend trains a stand-in with a byte tokenizer: bos, then per message a role header, the
    # text's bytes and an end token; every example once per epoch
    per_example = 1 + (1 + len("What is two plus two?") + 1) + (1 + len("Four.") + 1)
    assert card.estimate is not None and card.estimate.tokens == 10 * per_example * 3
    lines = card.lines()
    assert "estimate (from the config and its data, not a measurement):" in lines
    assert (f"  tokens: ~{10 * per_example * 3:,} ({10 * per_example:,} tokens of 10 examples x 3 epoch(s), "
            "counted with the byte tokenizer of the tiny model the embedded backend trains in place of "
            "Qwen/Qwen3-0.6B)") in lines
    assert "  wall time: unknown (SFT has no dry run to time)" in lines
    hosted = estimate(card.estimate.workload, None, Target("https://backend.example/api"))
    assert hosted.tokens == chars // 4 * 3 and not hosted.tokens_floor
    assert hosted.tokens_how == (f"~{chars // 4:,} tokens (characters / 4) x 3 epoch(s); the backend's tokenizer "
                                 "and chat template decide the real count")


def test_a_broken_dataset_is_the_problem_with_line_numbers(folder: Path) -> None:
    (folder / "train.jsonl").write_text(CHAT % ("hi", "hello") + '{"messages": [{"role": "wizard", "content": "x"}]}\n')
    (folder / "sft.toml").write_text(MINIMAL_SFT)
    card = _card(folder / "sft.toml", Target("http://127.0.0.1:9/api", "sk-local-key-000000000000"))
    assert not card.ok and card.problem is not None
    assert "train.jsonl:2 [messages[0].role]" in card.problem and "train.jsonl:2 [messages]" in card.problem
    assert card.lines()[-1] == "verdict: not ready (nothing was sent)"


def test_the_estimate_uses_the_dry_rollouts_latency_and_the_catalogues_price(monkeypatch: pytest.MonkeyPatch) -> None:
    work = Workload(rollouts=1000, formula="rollout.budget 1000", concurrency=10, model="gpt-4.1-mini")
    dry = DryRollout(True, seed=0, reward=1.0, latency_ms=500.0,
                     trace=[{"usage": {"total_tokens": 200}, "messages": [], "response": {}}])
    hosted = Target("https://backend.example/api")
    unknown = estimate(work, dry, hosted)
    assert unknown.tokens == 200_000 and unknown.wall_seconds == 50.0
    assert unknown.cost == "unknown (the model catalogue has no price for gpt-4.1-mini)"
    monkeypatch.setitem(catalogue.PRICES_USD_PER_MILLION_TOKENS, "GPT-4.1-mini", (0.4, 1.6))
    priced = estimate(work, dry, hosted)
    assert priced.cost == "$0.08-$0.32 (200,000 tokens at $0.4/$1.6 per million)"
    assert "  wall time: 50s (a rough figure: 1,000 rollouts / 10 at a time x 500 ms per dry rollout; a warm " \
           "or loaded machine, the search's and the training's own work move it)" in priced.lines()
    floor = estimate(Workload(rollouts=1000, formula="rollout.budget 1000", model="gpt-4.1-mini",
                              token_gaps=("how long the prompts the search writes are",)), dry, hosted)
    assert floor.tokens == 200_000 and floor.tokens_floor and floor.cost.startswith("at least $0.08-$0.32")
    assert floor.lines()[2:4] == ["  tokens: at least ~200,000 (1,000 rollouts x 200 prompt and completion tokens "
                                  "in the dry rollout)",
                                  "  not estimated: how long the prompts the search writes are"]
    unbounded = estimate(Workload(formula="no rollout.budget"), None, hosted)
    assert unbounded.lines()[1:] == ["  rollouts: unknown (no rollout.budget)",
                                     "  tokens: unknown (needs a bounded rollout count and a dry rollout that "
                                     "reports token usage)", "  wall time: unknown (no dry rollout to time)",
                                     "  cost: unknown (the model catalogue has no price for this model)"]
