"""What a prompt-learning job will do, from its create body: the rollouts GEPA or MIPRO will spend.

The counts follow the embedded backend's schedule (``synth_nb.local.executors.prompt_learning``), with its
defaults: GEPA spends ``rollout.budget`` on the search, MIPRO its bootstrap, the baseline's and the
periodic full evaluations on ``online_pool`` and its trials' minibatches (capped by ``max_rollouts``); both
then score the baseline and the top candidates on the held-out pool, outside the budget. How long the
prompts the search writes are, and a proposer model's calls, are sized by one dry proposal of the job
against its schedule (``Workload.search``, see ``schedule``); where the backend runs none, they are named
in ``Workload.token_gaps``.
"""

from __future__ import annotations

from typing import Any

from synth_nb.flows.base import Workload
from synth_nb.flows.prompt_learning.schedule import GepaSchedule, MiproSchedule
from synth_nb.flows.search_mix import PromptSearch
from synth_nb.plan import Plan

__all__ = ["workload"]

#: the executors' defaults for keys a config may leave out
GEPA_TOP_K = 3
GEPA_MINIBATCH = 8
MAX_CONCURRENT = 20
MIPRO_DEFAULTS = {"num_iterations": 20, "num_evaluations_per_iteration": 5, "batch_size": 32,
                  "full_eval_every_k": 5, "max_instructions": 6, "max_demo_sets": 6, "max_demo_set_size": 4,
                  "top_k": 3}

#: what one of ``_gepa``/``_mipro`` reads: rollouts, formula, concurrency, training seeds, gaps, schedule
Reading = tuple[int | None, str, int | None, list[int], tuple[str, ...], PromptSearch | None]


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _seeds(*values: Any) -> list[int]:
    for value in values:
        if isinstance(value, list) and value:
            return list(dict.fromkeys(v for v in value if isinstance(v, int)))
    return []


def _held_out(seeds: list[int], prompts: int, pool: str) -> tuple[int, str]:
    if not seeds:
        return 0, ""
    return len(seeds) * prompts, f" + held-out {pool} {len(seeds)} x {prompts} prompts (baseline and top) after the search"


def _proposer_gap(table: dict[str, Any], *url_keys: str) -> tuple[str, ...]:
    url = next((v for key in url_keys if isinstance(v := _get(table, key), str) and v), None)
    if url is None:
        return ()
    return (f"the proposer model's calls at {url} (their prompts and replies)",)


def _get(table: dict[str, Any], dotted: str) -> Any:
    node: Any = table
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _population_cap(gepa: dict[str, Any]) -> int | None:
    """``num_generations x children_per_generation``: the executor's cap on proposals, when both are given."""
    population = _table(gepa.get("population"))
    generations, children = _int(population.get("num_generations")), _int(population.get("children_per_generation"))
    return generations * children if generations and children else None


def _gepa(table: dict[str, Any]) -> Reading:
    gepa = _table(table.get("gepa"))
    rollout, evaluation = _table(gepa.get("rollout")), _table(gepa.get("evaluation"))
    budget = _int(rollout.get("budget")) or _int(gepa.get("rollout_budget")) or _int(
        _table(table.get("termination_config")).get("max_rollouts"))
    minibatch = _int(rollout.get("minibatch_size"))
    val = _seeds(evaluation.get("val_seeds"), evaluation.get("validation_seeds"), gepa.get("validation_seeds"))
    test = _seeds(evaluation.get("test_pool"), gepa.get("test_pool"), table.get("test_pool"))
    top_k = _int(evaluation.get("validation_top_k")) or _int(gepa.get("validation_top_k")) or GEPA_TOP_K
    train = _seeds(evaluation.get("train_seeds"), evaluation.get("seeds"), table.get("train_seeds"))
    gaps = ("how much longer than the baseline the prompts GEPA's proposals write are (every rollout is "
            "counted at the baseline prompt's size)",
            *_proposer_gap(gepa, "mutation.llm_inference_url", "mutation_llm_inference_url"))
    if budget is None:
        return None, "no rollout.budget in [prompt_learning.gepa]: the backend decides", None, train, gaps, None
    held, held_text = _held_out(test or val, top_k + 1, "test_pool" if test else "val_seeds")
    formula = f"rollout.budget {budget}" + (f" (reflective minibatches of {minibatch})" if minibatch else "")
    concurrency = _int(rollout.get("max_concurrent"))
    size = minibatch or GEPA_MINIBATCH
    schedule = GepaSchedule(budget=budget, validation=len(val), minibatch=size, held_out=len(test or val),
                            top_k=top_k, max_proposals=_population_cap(gepa), seeds=tuple(train[:4 * size]),
                            concurrency=concurrency or MAX_CONCURRENT) if train and val else None
    return budget + held, formula + held_text, concurrency, train, gaps, schedule


def _mipro(table: dict[str, Any]) -> Reading:
    mipro = _table(table.get("mipro"))
    n = {key: _int(mipro.get(key)) or default for key, default in MIPRO_DEFAULTS.items()}
    bootstrap = _seeds(mipro.get("bootstrap_train_seeds"), table.get("bootstrap_train_seeds"))
    online = _seeds(mipro.get("online_pool"), table.get("online_pool"))
    reference = _seeds(mipro.get("reference_pool"), table.get("reference_pool"))
    test = _seeds(mipro.get("test_pool"), table.get("test_pool"))
    gaps = ("how much longer than the baseline the proposed instructions and bootstrapped demos make the "
            "prompt (every rollout is counted at the baseline prompt's size)",
            *_proposer_gap(mipro, "meta.inference_url", "meta_model_inference_url"))
    if not online:
        return None, "online_pool missing in [prompt_learning.mipro]", None, bootstrap, gaps, None
    trials = n["num_iterations"] * n["num_evaluations_per_iteration"]
    batch = min(n["batch_size"], len(online))
    # the baseline, one full evaluation every full_eval_every_k trials and one at the end, each of a new pair
    full = 1 + min(trials // n["full_eval_every_k"] + 1, trials, n["max_instructions"] * n["max_demo_sets"])
    search = len(bootstrap) + len(reference) + full * len(online) + trials * batch
    formula = (f"{len(bootstrap)} bootstrap" + (f" + {len(reference)} reference" if reference else "")
               + f" + {full} full evaluations x online_pool {len(online)} + {trials} trials "
               f"(num_iterations {n['num_iterations']} x num_evaluations_per_iteration "
               f"{n['num_evaluations_per_iteration']}) x batch_size {batch}")
    cap = _int(mipro.get("max_rollouts")) or _int(_table(table.get("termination_config")).get("max_rollouts"))
    if cap is not None and cap < search:
        search, formula = cap, f"max_rollouts {cap} (the schedule, {formula}, would spend {search})"
    held, held_text = _held_out(test or online, min(n["top_k"] + 1, full), "test_pool" if test else "online_pool")
    concurrency = _int(mipro.get("max_concurrent"))
    grounding = reference or bootstrap
    include_empty = _table(mipro.get("demo")).get("include_empty", True) is not False
    schedule = MiproSchedule(
        grounding=len(bootstrap) + len(reference), online=len(online), batch=batch, trials=trials,
        full_every=n["full_eval_every_k"], instructions=n["max_instructions"], demo_sets=n["max_demo_sets"],
        demo_size=n["max_demo_set_size"], include_empty=include_empty, top_k=n["top_k"],
        held_out=len(test or online), cap=cap, seeds=tuple(grounding[:max(1, len(grounding) // 2)]),
        concurrency=concurrency or MAX_CONCURRENT, grounding_pool=len(grounding)) if grounding else None
    return search + held, formula + held_text, concurrency, bootstrap, gaps, schedule


def workload(plan: Plan) -> Workload:
    """Rollouts of the search and the held-out evaluation, concurrency, the policy model, the first seed."""
    body = _table(plan.create_step.body)
    table = _table(_table(body.get("config_body")).get("prompt_learning"))
    algorithm = str(table.get("algorithm") or plan.algorithm or "").lower()
    rollouts, formula, concurrency, seeds, gaps, search = _mipro(table) if algorithm == "mipro" else _gepa(table)
    env_config = _table(table.get("env_config")) or _table(_table(table.get(algorithm)).get("env_config"))
    policy = _table(table.get("policy"))
    url = table.get("task_app_url")
    return Workload(rollouts=rollouts, formula=formula, concurrency=concurrency,
                    model=policy.get("model") if isinstance(policy.get("model"), str) else None,
                    task_url=url if isinstance(url, str) else None, seed=seeds[0] if seeds else 0,
                    split=str(env_config.get("split") or env_config.get("pool") or "train"), token_gaps=gaps,
                    search=search)
