"""The pre-flight card: task app, dry rollout, data and an estimate labelled as one; never a job."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from minimal_configs import LOCAL_GEPA, MINIMAL_SFT
from shared_fixtures import ENV_KEY, prompt_learning_jobs

from synth_nb import pipeline
from synth_nb.flows import catalogue
from synth_nb.flows.base import Workload
from synth_nb.flows.prompt_learning.schedule import GepaSchedule, MiproSchedule
from synth_nb.pipeline import SecretSources, Target
from synth_nb.pipeline.card import build_card
from synth_nb.pipeline.dry_rollout import DryProposal, DryRollout, DryTraining
from synth_nb.pipeline.estimate import estimate, wall_text

CHAT = '{"messages": [{"role": "user", "content": "%s"}, {"role": "assistant", "content": "%s"}]}\n'


def _card(path: Path, target: Target) -> Any:
    prepared = pipeline.prepare_config(path, overrides=pipeline.build_overrides({}, target), target=target,
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
    assert "dry proposal: the offline proposer rewrote the prompt from 4 rollouts: " in text
    assert ("estimate (from the config, one dry rollout, one dry proposal and the whole search run once, not a "
            "measurement):") in text
    assert "rollouts: 432 = rollout.budget 400 (reflective minibatches of 4) + held-out test_pool 16 x 2" in text
    assert "  tokens: ~" in text and "at least" not in text.split("  tokens: ")[1].split("\n")[0]
    assert "not estimated" not in text and "GEPA's schedule: " in text
    wall = text.split("  wall time: ")[1].split("\n")[0]
    assert wall.startswith("< 1 min (about ") and "at least" not in wall, wall
    # a search this small (a few seconds at the dry pace) is run once in full for its wall time, for no job
    # the rollouts that run counted (412: the plan says at most 432, and the budget's last minibatch does not fit)
    assert re.search(r"\(estimate on this machine now: the whole search \(4[0-3]\d rollouts\) run once by this check ",
                     wall), wall
    assert prompt_learning_jobs(backend) == []
    assert "cost: $0 (the embedded backend runs on this machine)" in text
    assert text.endswith("verdict: ready (no job was sent)")
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
    # nothing listens there: the config is fine, but the verdict on the backend needs an answer from it
    assert not card.ok and card.verdict == "not ready" and card.task_app is None and card.dry is None
    assert card.backend_check is not None and card.backend_check.contacted
    assert card.backend_check.line() == ("backend check: the backend could not be reached (ConnectError on GET "
                                         "/learning/jobs): is it running, and is --backend (or "
                                         "SYNTH_BACKEND_OVERRIDE) right? Offline, use --backend local")
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
    assert "  wall time: unknown (the backend offers no dry training step to time)" in lines
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
    assert card.lines()[-1] == "verdict: not ready (no job was sent)"


def test_the_estimate_uses_the_dry_rollouts_tokens_and_the_catalogues_price(monkeypatch: pytest.MonkeyPatch) -> None:
    work = Workload(rollouts=1000, formula="rollout.budget 1000", concurrency=10, model="gpt-4.1-mini")
    dry = DryRollout(True, seed=0, reward=1.0, latency_ms=500.0,
                     trace=[{"usage": {"total_tokens": 200}, "messages": [], "response": {}}])
    hosted = Target("https://backend.example/api")
    unknown = estimate(work, dry, hosted)
    assert unknown.tokens == 200_000 and unknown.wall_seconds == 50.0 and unknown.wall == "at least 50 s"
    assert unknown.cost == "unknown (the model catalogue has no price for gpt-4.1-mini)"
    monkeypatch.setitem(catalogue.PRICES_USD_PER_MILLION_TOKENS, "GPT-4.1-mini", (0.4, 1.6))
    priced = estimate(work, dry, hosted)
    assert priced.cost == "$0.08-$0.32 (200,000 tokens at $0.4/$1.6 per million)"
    assert "  wall time: at least 50 s (1,000 rollouts in 100 waves of 10, each at least one dry rollout's 500 ms on " \
           "this machine now; not timed: the job's own work between them (training updates, a search's proposals), " \
           "its start-up, and a busier machine)" in priced.lines()
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


def test_a_searchs_estimate_multiplies_its_schedule_by_the_dry_proposal(monkeypatch: pytest.MonkeyPatch) -> None:
    # baseline on 10 validation seeds, then 5 iterations of 2 x 5 rollouts, 4 accepted proposals scored on the
    # 10 (the fifth's does not fit the budget), then 20 held-out rollouts of the top candidate
    schedule = GepaSchedule(budget=100, validation=10, minibatch=5, held_out=20, top_k=1, max_proposals=None,
                            seeds=tuple(range(20)), concurrency=5)
    work = Workload(rollouts=140, formula="rollout.budget 100", model="gpt-4.1-mini",
                    token_gaps=("how long the prompts the search writes are",), search=schedule)
    proposal = DryProposal(proposer="offline", seeds=5, baseline_tokens=100.0, proposed_tokens=150.0,
                           baseline_score=0.6, proposed_score=1.0, chars_before=100, chars_after=300,
                           demo_chars=None, proposer_tokens=0, warm_rollouts=20, warm_seconds=0.2,
                           proposed_seconds=0.1, proposed_rollouts=5, propose_seconds=0.05)
    dry = DryRollout(True, seed=0, reward=1.0, latency_ms=5.0, proposal=proposal,
                     trace=[{"usage": {"total_tokens": 100}, "messages": [], "response": {}}])
    monkeypatch.setitem(catalogue.PRICES_USD_PER_MILLION_TOKENS, "GPT-4.1-mini", (0.4, 1.6))
    est = estimate(work, dry, Target("https://backend.example/api"))
    mix = schedule.mix(accepted=True)
    assert mix.proposer_calls == 5 and round(mix.proposal_rollouts, 3) == 167.833
    assert est.tokens == round(140 * 100 + mix.proposal_rollouts * 50) == 22_392
    assert not est.tokens_floor and est.gaps == () and est.basis == "the config, one dry rollout and one dry proposal"
    assert est.cost == "$0.01-$0.04 (22,392 tokens at $0.4/$1.6 per million)"
    # 140 rollouts at the warm pace (10 ms) + 5 proposals x (writing 0.05 s + first batch beyond that pace 0.05 s)
    assert est.wall_seconds == pytest.approx(1.9) and est.wall == "< 1 min (about 1.9 s)" and not est.wall_floor
    # with a second, warm proposal, each of the job's proposals takes what that one took (0.01 + 0.03 - 5 x 10 ms)
    warm = dataclasses.replace(proposal, again_rollouts=5, again_seconds=0.06, again_propose_seconds=0.01)
    again = estimate(work, dataclasses.replace(dry, proposal=warm), Target("https://backend.example/api"))
    assert again.wall_seconds == pytest.approx(1.4 + 5 * 0.02) and not again.wall_floor
    assert ("5 proposals x 0.010 s of writing + 5 new prompts x 0.010 s for their first batch beyond that pace, as "
            "the second (warm) dry proposal took") in again.wall_how
    assert "the first dry proposal took 0.08 s more (a cold policy" in again.wall_how
    # with the backend's CPU seconds, a new prompt's first batch is its CPU beyond the warm batches' per rollout
    # (0.025 - 5 x 0.1 / 20), at their wall seconds per CPU second (0.2 / 0.1): a burst in a batch this short is
    # not counted, the warm batches' load is
    timed = dataclasses.replace(warm, warm_cpu_seconds=0.1, again_cpu_seconds=0.025)
    by_cpu = estimate(work, dataclasses.replace(dry, proposal=timed), Target("https://backend.example/api"))
    assert timed.new_prompt_seconds == pytest.approx(0.0) and timed.wall_per_cpu == pytest.approx(2.0)
    assert dataclasses.replace(timed, again_cpu_seconds=0.035).new_prompt_seconds == pytest.approx(0.02)
    assert by_cpu.wall_seconds == pytest.approx(1.4 + 5 * 0.01)
    assert "at the warm batches' 2.00 wall seconds per CPU second" in by_cpu.wall_how
    assert "not estimated" not in "\n".join(est.lines())
    rejected = schedule.mix(accepted=False)  # about half accepted: more, shallower proposals
    assert rejected.proposer_calls > mix.proposer_calls and rejected.proposal_rollouts < mix.proposal_rollouts
    solved = schedule.mix(accepted=True, solved=1.0)  # every minibatch solved whole: GEPA proposes nothing
    assert solved.proposer_calls == 0 and solved.proposal_rollouts == 0


def test_a_mipro_search_times_its_new_instructions_first_batches_at_the_first_dry_proposals_pace() -> None:
    # 5 new instructions, each written from a random half of 80 grounding rollouts; the dry proposal wrote from
    # 40 of them, so half of each one's text is new to the policy: 2.5 first batches of new text
    schedule = MiproSchedule(grounding=80, online=48, batch=16, trials=20, full_every=5, instructions=6,
                             demo_sets=6, demo_size=4, include_empty=True, top_k=3, held_out=64, cap=1000,
                             seeds=tuple(range(40)), concurrency=16, grounding_pool=80)
    mix = schedule.mix(accepted=True)
    assert mix.new_texts == pytest.approx(2.5) and mix.new_prompts == 20
    work = Workload(rollouts=944, formula="the schedule", search=schedule)
    proposal = DryProposal(proposer="offline", seeds=40, baseline_tokens=200.0, proposed_tokens=700.0,
                           baseline_score=0.85, proposed_score=1.0, chars_before=200, chars_after=2300,
                           demo_chars=75.0, proposer_tokens=0, warm_rollouts=1600, warm_seconds=0.16,
                           proposed_seconds=0.164, proposed_rollouts=40, propose_seconds=0.0,
                           again_rollouts=39, again_seconds=0.0059, again_propose_seconds=0.0)
    dry = DryRollout(True, seed=0, reward=1.0, latency_ms=5.0, proposal=proposal,
                     trace=[{"usage": {"total_tokens": 200}, "messages": [], "response": {}}])
    est = estimate(work, dry, Target("http://127.0.0.1:9/api", "sk-local-key-000000000000"))
    # 944 rollouts x 0.1 ms + 20 new pairs x 0.002 s (the warm second proposal) + 2.5 x 0.16 s (the first's)
    assert proposal.new_text_seconds == pytest.approx(0.16) and proposal.new_prompt_seconds == pytest.approx(0.002)
    assert est.wall_seconds == pytest.approx(0.0944 + 20 * 0.002 + 2.5 * 0.16)
    assert ("+ 2.5 first batches of new text x 0.160 s, what the first dry proposal's batch took beyond the pace "
            "(5 new instructions, each written from a random half of the 80 grounding rollouts, the dry proposal "
            "from 40 of them: 50% of each one's text new to the policy)") in est.wall_how


def test_a_small_searchs_wall_time_is_the_span_of_the_whole_search_run_once_by_the_check() -> None:
    schedule = GepaSchedule(budget=100, validation=10, minibatch=5, held_out=20, top_k=1, max_proposals=None,
                            seeds=tuple(range(20)), concurrency=5)
    work = Workload(rollouts=140, formula="rollout.budget 100", search=schedule)
    doc = {"proposer": "offline", "seeds": 5, "chars_before": 100, "chars_after": 300, "propose_seconds": 0.05,
           "baseline": {"tokens_per_rollout": 100.0, "score": 0.6, "rollouts": 20, "seconds": 0.05},
           "proposed": {"tokens_per_rollout": 150.0, "score": 1.0, "rollouts": 5, "seconds": 0.1},
           "warm": {"rollouts": 20, "seconds": 0.2, "cpu_seconds": 0.1}}
    rehearsed = DryProposal.parse({**doc, "rehearsal": {"seconds": 0.4123, "cpu_seconds": 0.38, "events": 90,
                                                        "tokens": 15_321, "rollouts": 138}})
    assert rehearsed is not None and rehearsed.rehearsal_seconds == pytest.approx(0.4123)
    dry = DryRollout(True, seed=0, reward=1.0, latency_ms=5.0, proposal=rehearsed,
                     trace=[{"usage": {"total_tokens": 100}, "messages": [], "response": {}}])
    target = Target("http://127.0.0.1:9/api", "sk-local-key-000000000000")
    est = estimate(work, dry, target)
    # a run under a second counts by its CPU seconds (its wall time is how the machine's other work fell)
    assert est.wall_seconds == pytest.approx(0.38) and est.wall == "< 1 min (about 0.4 s)" and not est.wall_floor
    assert est.basis == "the config, one dry rollout, one dry proposal and the whole search run once"
    # its tokens are what that run's usage report counted, not the schedule's arithmetic
    assert est.tokens == 15_321 and not est.tokens_floor and est.tokens_how.startswith(
        "what the whole search (138 rollouts) run once by this check used, counted as the job counts them (its "
        "policy route and its proposer); from the schedule alone ~")
    assert est.wall_how.startswith("estimate on this machine now: the whole search (138 rollouts) run once by this "
                                   "check through the job's own search, task-app runner and event store, in 0.41 s, "
                                   "0.38 s of the backend's CPU (a run under a second is counted by its CPU seconds: "
                                   "its wall time is how the machine's other work fell); no job was created and "
                                   "nothing kept")
    # a longer one shares the machine as the job will: its wall seconds
    longer = dataclasses.replace(rehearsed, rehearsal_seconds=2.5, rehearsal_cpu_seconds=1.9)
    timed = estimate(work, dataclasses.replace(dry, proposal=longer), target)
    assert timed.wall_seconds == pytest.approx(2.5) and "in 2.50 s, 1.90 s of the backend's CPU; no job" in timed.wall_how
    unsaid = dataclasses.replace(rehearsed, rehearsal_cpu_seconds=None)  # a backend that did not say its CPU
    assert estimate(work, dataclasses.replace(dry, proposal=unsaid), target).wall_seconds == pytest.approx(0.4123)
    # not rehearsed: the pace's estimate, with the backend's reason, one inert line of at most 200 characters
    hostile = "\x1b]0;owned\x07 too\nlong " + "x" * 400
    skipped = DryProposal.parse({**doc, "rehearsal": {"skipped": hostile}})
    assert skipped is not None and skipped.rehearsal_seconds is None
    assert skipped.rehearsal_note.startswith("\\x1b]0;owned\\x07 too long xxx") and len(skipped.rehearsal_note) == 200
    paced = estimate(work, dataclasses.replace(dry, proposal=skipped), target)
    # 140 rollouts at the warm 10 ms + 5 proposals x (0.05 s of writing + 0.05 s beyond the pace), as before
    assert paced.wall_seconds == pytest.approx(1.9) and "\x1b" not in paced.wall_how
    assert "; the whole search was not run once: \\x1b]0;owned" in paced.wall_how
    for answer in ({"seconds": 0}, {"seconds": -1}, {"seconds": "0.4"}, {"stopped": 3}, "0.4", None):
        odd = DryProposal.parse({**doc, "rehearsal": answer})
        assert odd is not None and odd.rehearsal_seconds is None and odd.rehearsal_note == ""


def test_wall_time_is_never_said_as_0s() -> None:
    assert wall_text(0.0) == "< 1 min (under 0.1 s)" and wall_text(0.2, floor=True) == "at least 0.2 s"
    assert wall_text(0.43) == "< 1 min (about 0.4 s)" and wall_text(9.96) == "< 1 min (about 10 s)"
    assert wall_text(0.01, floor=True) == "at least 0.1 s" and wall_text(42.4, floor=True) == "at least 42 s"
    assert wall_text(59.4) == "< 1 min (about 59 s)" and wall_text(185) == "about 3 min"
    assert wall_text(3725) == "about 1 h 02 min" and wall_text(None) == "unknown"


def test_a_training_jobs_wall_time_is_its_dry_training_run_plus_its_other_steps_and_evaluations() -> None:
    training = DryTraining(model="tiny random-init GPT-2", seconds=10.0, load_seconds=6.0, steps=4, step_seconds=0.5,
                           evaluation_seconds=2.0, job_steps=104, job_evaluations=3, device="cpu")
    work = Workload(tokens=1000, embedded_tokens=900, embedded_tokens_how="byte tokenizer")
    dry = DryRollout(True, training=training)
    est = estimate(work, dry, Target("http://127.0.0.1:9/api", "sk-local-key-000000000000"))
    # the dry run's 10 s (start-up, first and last evaluation, saving, 4 steps) + 100 steps x 0.5 s + 3 x 2 s
    assert est.wall_seconds == pytest.approx(66.0) and est.wall == "about 1 min" and not est.wall_floor
    assert est.basis == "the config and its data and a dry training run"
    assert est.wall_how.startswith("estimate on this machine now, from a dry training run of 4 real steps of the job: "
                                   "10.0 s for that run (start-up 6.0 s: worker started, tiny random-init GPT-2 loaded")
    assert "+ 100 steps x 0.50 s (one optimiser step) + 3 evaluations x 2.00 s (one evaluation)" in est.wall_how
    assert dry.lines() == ["dry training: 4 real steps of the job on cpu (tiny random-init GPT-2): start-up 6.0 s "
                           "(worker, model loaded, data prepared), 0.50 s per step (one optimiser step), 2.00 s per "
                           "evaluation (one evaluation); 10.0 s in all"]
    # a start-up that took longer than its CPU work at the machine's load counts as that: 2 s of CPU at load 3
    # on 2 cores is 3 s, where the dry run's worker took 6 (it waited for the disk or the machine's other work)
    loaded = dataclasses.replace(training, load_cpu_seconds=2.0, load_average=3.0, cores=2)
    assert loaded.contention == pytest.approx(1.5) and loaded.startup_seconds == pytest.approx(3.0)
    waited = estimate(work, DryRollout(True, training=loaded), Target("http://127.0.0.1:9/api", "sk-local-key-000000000000"))
    assert waited.wall_seconds == pytest.approx(66.0 - 3.0)
    assert ("with the start-up counted as 3.0 s: its 2.0 s of CPU at 1.5x (load 3.0 on 2 cores), the rest a wait "
            "of the dry run's worker") in waited.wall_how and "; measured at load 3.0 on 2 cores" in waited.wall_how
    quiet = dataclasses.replace(loaded, load_average=0.5)  # at least 1x: a start-up never counts under its CPU
    assert quiet.startup_seconds == pytest.approx(2.0)
    assert dataclasses.replace(loaded, load_cpu_seconds=5.0).startup_seconds == pytest.approx(6.0)
    assert DryTraining.parse({"seconds": 10, "load_seconds": 6, "steps": 4, "step_seconds": 0.5,
                              "evaluation_seconds": 2, "job_steps": 104, "job_evaluations": 3,
                              "load_cpu_seconds": 2.0, "load_average": 3.0, "cores": 2}) == dataclasses.replace(
        loaded, model="the job's model", device=None)
    failed = DryRollout(True, problem="the dry training run failed: boom")
    unknown = estimate(work, failed, Target("http://127.0.0.1:9/api", "sk-local-key-000000000000"))
    assert unknown.wall == "unknown" and unknown.wall_how == "the dry training run failed: boom"
