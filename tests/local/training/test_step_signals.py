"""The fields the embedded GRPO loop adds to each ``rl.train.step`` event for the run-health warnings: mean
completion length, the groups whose rewards were all equal, and each group's seed and winning completion."""

from __future__ import annotations

from dataclasses import dataclass

from synth_nb.local.training.step_signals import completion_hash, group_signals


@dataclass
class Sampled:
    completion_ids: list[int]


def test_a_step_says_its_completion_length_flat_groups_and_each_groups_winner() -> None:
    # two groups of 3 rollouts (seeds 7 and 8): the first flat, the second won by slot 4; slot 5 failed
    results: list[float | BaseException] = [0.5, 0.5, 0.5, 0.1, 0.9, RuntimeError("task app down")]
    records = {0: [Sampled([1, 2])], 1: [Sampled([1, 2])], 2: [Sampled([3])], 3: [Sampled([4, 5, 6])],
               4: [Sampled([7]), Sampled([8, 9, 10])], 5: [Sampled([11])]}
    signals = group_signals(results, records, 3, [7, 8])
    assert signals["completion_tokens_mean"] == round((2 + 2 + 1 + 3 + 4) / 5, 2)  # every turn of a rollout
    assert signals["groups"] == 2 and signals["zero_variance_groups"] == 1 and signals["group_seeds"] == [7, 8]
    flat_winner, winner = signals["winning_completions"]
    assert flat_winner == completion_hash(records[0])  # a tie goes to the first rollout
    assert winner == completion_hash(records[4]) != completion_hash([Sampled([7, 8, 9])])


def test_equal_completions_share_a_fingerprint_and_a_group_without_results_is_left_out() -> None:
    assert completion_hash([Sampled([1, 2])]) == completion_hash([Sampled([1, 2])]) != completion_hash([Sampled([12])])
    signals = group_signals([RuntimeError("x"), RuntimeError("y")], {}, 2, [3])
    assert signals == {"completion_tokens_mean": None, "groups": 0, "zero_variance_groups": 0, "group_seeds": [],
                       "winning_completions": []}
