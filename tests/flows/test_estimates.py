"""What each flow says a job will do before it runs: the counts follow the embedded backend's schedule."""

from __future__ import annotations

from pathlib import Path

from synth_nb.flows import get_flow, plan_for
from synth_nb.flows.overrides import Overrides

from .conftest import bundle, write_config
from .test_prompt_learning import MIPRO_TOP_LEVEL_SEEDS


def test_mipro_counts_bootstrap_full_evaluations_trials_and_the_held_out_pool(tmp_path: Path) -> None:
    """Left-out keys take the executor's defaults: 5 trials per iteration, minibatches of 32 cut to the
    3-seed online pool, a full evaluation every 5 trials plus the baseline's and the last one; the
    held-out pool is the online pool when there is no test_pool."""
    plan = plan_for(write_config(tmp_path, MIPRO_TOP_LEVEL_SEEDS), Overrides(), bundle())
    work = get_flow("prompt_learning").workload(plan)
    assert work.rollouts == 3 + 4 * 3 + 10 * 3 + 3 * 4
    assert work.formula == ("3 bootstrap + 4 full evaluations x online_pool 3 + 10 trials (num_iterations 2 x "
                            "num_evaluations_per_iteration 5) x batch_size 3 + held-out online_pool 3 x 4 prompts "
                            "(baseline and top) after the search")
    assert work.token_gaps and "proposed instructions and bootstrapped demos" in work.token_gaps[0]


def test_mipro_max_rollouts_caps_the_search_but_not_the_held_out_pool(tmp_path: Path) -> None:
    config = MIPRO_TOP_LEVEL_SEEDS + "max_rollouts = 20\n"
    work = get_flow("prompt_learning").workload(plan_for(write_config(tmp_path, config), Overrides(), bundle()))
    assert work.rollouts == 20 + 3 * 4
    assert work.formula.startswith("max_rollouts 20 (the schedule, 3 bootstrap + 4 full evaluations")


def test_a_configured_proposer_model_is_named_as_not_estimated(tmp_path: Path) -> None:
    config = MIPRO_TOP_LEVEL_SEEDS + 'meta_model_inference_url = "http://127.0.0.1:9/v1"\n'
    work = get_flow("prompt_learning").workload(plan_for(write_config(tmp_path, config), Overrides(), bundle()))
    assert work.token_gaps[1] == "the proposer model's calls at http://127.0.0.1:9/v1 (their prompts and replies)"
