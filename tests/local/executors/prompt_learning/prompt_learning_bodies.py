"""Create-request bodies for the bundled banking task app (small, fast configurations)."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

CONFIGS = Path(__file__).resolve().parents[4] / "example_notebooks" / "configs"


def body_from_config(name: str, task_app: Any, *, policy: str = "keyword", **algo_overrides: Any) -> dict[str, Any]:
    raw = tomllib.loads((CONFIGS / name).read_text(encoding="utf-8"))
    pl = copy.deepcopy(raw["prompt_learning"])
    pl["task_app_url"] = task_app.url
    pl["task_app_api_key"] = task_app.api_key
    pl["policy"]["local_policy"] = policy
    algo = pl["algorithm"]
    for dotted, value in algo_overrides.items():
        node = pl[algo]
        *parents, leaf = dotted.split("__")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return {"algorithm": algo, "config_body": {"prompt_learning": pl}, "metadata": {}}


def small_gepa(task_app: Any, *, budget: int = 120, **overrides: Any) -> dict[str, Any]:
    """16 feedback seeds, 16 validation seeds, 16 held-out seeds, minibatch 4."""
    settings: dict[str, Any] = {
        "rollout__budget": budget, "rollout__minibatch_size": 4, "rollout__max_concurrent": 8,
        "evaluation__train_seeds": list(range(16)), "evaluation__val_seeds": list(range(80, 96)),
        "evaluation__test_pool": list(range(16)), "evaluation__validation_top_k": 2}
    return body_from_config("banking_gepa.toml", task_app, **{**settings, **overrides})


def small_mipro(task_app: Any, **overrides: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "num_iterations": 2, "num_evaluations_per_iteration": 3, "batch_size": 8,
        "bootstrap_train_seeds": list(range(32)), "online_pool": list(range(80, 96)), "test_pool": list(range(16)),
        "max_instructions": 3, "max_demo_sets": 3, "full_eval_every_k": 3}
    return body_from_config("banking_mipro.toml", task_app, **{**settings, **overrides})
