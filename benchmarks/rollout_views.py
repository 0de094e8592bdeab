"""The rollouts of a 10k-step RL job on the client: memory held and the time each view takes.

A job's history (``JobHistory``) takes in the ``rl.rollout.sampled`` events a 10,000-step run of the
bundled example config streams (``example_notebooks/configs/rl_tiny.toml`` with 10,000 steps: the first
group of 8 of every step plus 32 evaluation seeds every 20 steps: 96,000 rollouts), built with the
embedded backend's own event builder (``synth_nb.local.training.rollout_samples``), in pages of 5,000 as
an attach reads them. Texts are the charclass task's (a short prompt, a 12-token reply), and, with
``--long``, prompts of ~600 characters and replies of ~300 (a chat task).

Prints: bytes the history holds for them (tracemalloc), the time taking them in costs, then the median
wall time (of ``--repeats``, untraced) and peak traced memory (one more run) of: ``job.rollouts()`` (rows built and selected),
its notebook output (``_repr_mimebundle_``: what the view renders), ``job.rollouts(step=N)`` for the
last step, ``rollouts_df()`` and the terminal listing of ``--step N --worst 3``. Goals: <= 50 MiB held,
the view renders in <= 1 s. Nothing is asserted.

    .venv/bin/python benchmarks/rollout_views.py [--steps 10000] [--long] [--repeats 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

from synth_nb.client import EventRecord
from synth_nb.job.history import JobHistory
from synth_nb.job.samples import SampleViews
from synth_nb.local.training.policy_service import Sample
from synth_nb.local.training.rollout_samples import ROLLOUT_EVENT, rollout_sample
from synth_nb.local.training.task_app_client import RolloutOutcome

GROUP, EVAL_SEEDS, EVAL_EVERY = 8, 32, 20
PAGE = 5000


class _History(JobHistory, SampleViews):
    """A job's history with ``Job``'s sample views, without a backend connection."""


def _texts(rng: random.Random, long: bool) -> tuple[str, str]:
    words = ["digits", "only", "write", "capital", "letters", "the", "account", "card", "transfer", "please"]
    if long:
        prompt = "system: " + " ".join(rng.choice(words) for _ in range(40)) + "\nuser: " + " ".join(
            rng.choice(words) for _ in range(50))
        return prompt, " ".join(rng.choice(words) for _ in range(45))
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOP!?.,;:"
    return f"user: {rng.choice(['Only digits.', 'Digits only!', 'Write capital letters.'])}", "".join(
        rng.choice(alphabet) for _ in range(12))


def _events(steps: int, long: bool) -> Iterator[EventRecord]:
    rng = random.Random(0)
    seq = 0

    def record(step: int, phase: str, seed: int, member: int, group_rewards: list[float]) -> EventRecord:
        nonlocal seq
        seq += 1
        prompt, completion = _texts(rng, long)
        reward = group_rewards[member]
        sample = Sample(list(range(len(prompt) // 3)), list(range(12)), prompt, completion)
        outcome = RolloutOutcome(reward, {"filled": 1.0, "in_class": reward})
        message, data = rollout_sample(step=step, phase=phase, seed=seed, group=0, member=member, samples=[sample],
                                       outcome=outcome, advantage=reward - 0.5 if phase == "train" else None,
                                       group_rewards=group_rewards)
        document = json.dumps({"seq": seq, "type": ROLLOUT_EVENT, "level": "info", "message": message, "data": data,
                               "created_at": "2026-01-01T00:00:00Z"}, separators=(",", ":")).encode()
        return EventRecord(seq, ROLLOUT_EVENT, "info", document)

    for step in range(steps + 1):
        if step:
            rewards = [round(rng.random(), 3) for _ in range(GROUP)]
            for member in range(GROUP):
                yield record(step, "train", step * 4, member, rewards)
        if step % EVAL_EVERY == 0:
            rewards = [round(rng.random(), 3) for _ in range(EVAL_SEEDS)]
            for member in range(EVAL_SEEDS):
                yield record(step, "eval", 1000 + member, member, rewards)


def _timed(what: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """(median seconds untraced, peak traced MiB above the start in one more traced run)."""
    times = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter()
        what()
        times.append(time.perf_counter() - started)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    what()
    peak = (tracemalloc.get_traced_memory()[1] - base) / 2**20
    tracemalloc.stop()
    return statistics.median(times), peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--long", action="store_true", help="chat-sized texts instead of the charclass task's")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    records = list(_events(args.steps, args.long))
    pages = [records[i:i + PAGE] for i in range(0, len(records), PAGE)]
    ingest = []
    for _ in range(args.repeats):  # untraced: the time an attach spends taking them in (index included)
        timed: Any = _History("job_bench_rollouts", "rl")
        started = time.perf_counter()
        for page in pages:
            timed.ingest_events(page)
        ingest.append(time.perf_counter() - started)
        del timed
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    job: Any = _History("job_bench_rollouts", "rl")
    for page in pages:
        job.ingest_events(page)
    gc.collect()
    held = (tracemalloc.get_traced_memory()[0] - base) / 2**20
    tracemalloc.stop()
    del records, pages
    n = len(job.events)
    print(f"{n:,} rollout events of a {args.steps:,}-step RL job ({'long' if args.long else 'charclass'} texts)")
    print(f"  held by the history: {held:.1f} MiB ({held * 2**20 / n:.0f} bytes per rollout; goal <= 50 MiB)")
    print(f"  taken in (pages of {PAGE:,}, the sample index built as they arrive): {statistics.median(ingest):.2f} s")
    last = args.steps
    views: list[tuple[str, Callable[[], Any]]] = [
        ("job.rollouts() (rows built, selected)", lambda: job.rollouts()),
        ("its notebook output (HTML)", lambda: job.rollouts()._repr_mimebundle_()),
        (f"job.rollouts(step={last}) output", lambda: job.rollouts(last)._repr_mimebundle_()),
        ("job.rollouts_df()", lambda: job.rollouts_df()),
        (f"attach --rollouts --step {last} --worst 3", lambda: job.rollouts(last, worst=3).to_text()),
    ]
    print(f"  {'view':<42}{'median s':>10}{'peak MiB':>10}   (goal: the view renders in <= 1 s)")
    for label, view in views:
        seconds, peak = _timed(view, args.repeats)
        print(f"  {label:<42}{seconds:>10.3f}{peak:>10.1f}")


if __name__ == "__main__":
    main()
