"""The overrides prompt-learning users change between runs: how much the search may spend, how long it runs
and which seeds it trains on. Rows of the one override table (``synth_nb.flows.override_rows``), each
with the config keys it replaces: GEPA's first, then MIPRO's; the first whose table the config has wins.
"""

from __future__ import annotations

from synth_nb.flows.override_rows import OverrideRow

__all__ = ["ROWS"]

ROWS: tuple[OverrideRow, ...] = (
    OverrideRow("rollout_budget", "--rollout-budget", "int",
                "Prompt learning (GEPA): rollouts the search may use ([prompt_learning.gepa.rollout].budget).",
                "Rollout budget", "GEPA: rollouts the search may use", metavar="N",
                keys=(("prompt_learning", "gepa", "rollout", "budget"), ("prompt_learning", "gepa", "rollout_budget"))),
    OverrideRow("iterations", "--iterations", "int",
                "Prompt learning: GEPA generations ([prompt_learning.gepa.population].num_generations) or MIPRO "
                "iterations ([prompt_learning.mipro].num_iterations).",
                "Iterations", "GEPA generations, MIPRO iterations", metavar="N",
                keys=(("prompt_learning", "gepa", "population", "num_generations"),
                      ("prompt_learning", "gepa", "num_generations"), ("prompt_learning", "mipro", "num_iterations"))),
    OverrideRow("train_seeds", "--train-seeds", "seeds",
                "Prompt learning: the training seeds, as 0-79 or 0,1,2 (GEPA [prompt_learning.gepa.evaluation]"
                ".train_seeds, MIPRO [prompt_learning.mipro].bootstrap_train_seeds).",
                "Training seeds", "e.g. 0-79 or 0,1,2", metavar="SEEDS",
                keys=(("prompt_learning", "gepa", "evaluation", "train_seeds"), ("prompt_learning", "gepa", "evaluation",
                                                                                 "seeds"),
                      ("prompt_learning", "mipro", "bootstrap_train_seeds"))),
)
