"""Defaults synth-ai 0.2.24 fills into ``[prompt_learning]`` before sending it.

0.2.24 sends the table as its schema dumps it: unknown keys kept, and for every sub-table that is present
its declared defaults added. These tables are that behaviour written down as data, so the body matches
0.2.24's for every config it accepts (checked by tests/flows/test_parity.py).
"""

from __future__ import annotations

from typing import Any

__all__ = ["fill_prompt_learning_defaults"]

POLICY = {"inference_mode": "synth_hosted", "temperature": 0.0, "max_completion_tokens": 512}
MESSAGE = {"order": 0}

GEPA = {"env_name": "banking77", "proposer_type": "dspy"}
GEPA_SECTIONS: dict[str, dict[str, Any]] = {
    "rollout": {"max_concurrent": 20, "minibatch_size": 8},
    "evaluation": {},
    "mutation": {"rate": 0.3, "llm_provider": "groq"},
    "population": {"initial_size": 20, "num_generations": 10, "children_per_generation": 5,
                   "crossover_rate": 0.5, "selection_pressure": 1.0, "patience_generations": 3},
    "archive": {"size": 64, "pareto_set_size": 64, "pareto_eps": 1e-6, "feedback_fraction": 0.5},
    "token": {"counting_model": "gpt-4", "enforce_pattern_limit": True},
}
GEPA_MODULE = {"max_instruction_slots": 3}

MIPRO = {"num_iterations": 20, "num_evaluations_per_iteration": 5, "batch_size": 32, "max_concurrent": 20,
         "env_name": "banking77", "meta_model": "gpt-4o-mini", "meta_model_provider": "openai",
         "few_shot_score_threshold": 0.8, "token_counting_model": "gpt-4", "enforce_token_limit": True,
         "spec_max_tokens": 5000, "spec_include_examples": True}
MIPRO_META = {"temperature": 0.8, "max_tokens": 1024}
MIPRO_SEED_POOLS = ("bootstrap", "online", "test", "reference")


def _fill(table: dict[str, Any], defaults: dict[str, Any]) -> None:
    for key, value in defaults.items():
        table.setdefault(key, value)


def _is_int_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _initial_prompt(prompt: dict[str, Any]) -> None:
    prompt.setdefault("messages", [])
    prompt.setdefault("wildcards", {})
    for message in prompt["messages"]:
        if isinstance(message, dict):
            _fill(message, MESSAGE)


def _gepa(gepa: dict[str, Any]) -> None:
    _fill(gepa, GEPA)
    for name, defaults in GEPA_SECTIONS.items():
        if isinstance(gepa.get(name), dict):
            _fill(gepa[name], defaults)
    for module in gepa.get("modules") or []:
        if isinstance(module, dict):
            _fill(module, GEPA_MODULE)
            if isinstance(module.get("module_id"), str):
                module["module_id"] = module["module_id"].strip()


def _mipro_meta_is_typed(meta: dict[str, Any]) -> bool:
    """0.2.24 types ``meta`` (adding defaults) only when it is a valid meta-model table."""
    return (isinstance(meta.get("model"), str) and isinstance(meta.get("provider"), str)
            and all(_is_number(meta[k]) for k in ("temperature",) if k in meta)
            and all(isinstance(meta[k], int) and not isinstance(meta[k], bool) for k in ("max_tokens",) if k in meta)
            and (meta.get("inference_url") is None or isinstance(meta["inference_url"], str)))


def _mipro_modules_are_typed(modules: list[Any]) -> bool:
    for module in modules:
        if not isinstance(module, dict) or not isinstance(module.get("module_id"), str):
            return False
        stages = module.get("stages", [])
        if not isinstance(stages, list):
            return False
        for stage in stages:
            if not (isinstance(stage, dict) and isinstance(stage.get("stage_id"), str)
                    and isinstance(stage.get("baseline_instruction"), str)):
                return False
    return True


def _mipro(mipro: dict[str, Any]) -> None:
    _fill(mipro, MIPRO)
    meta = mipro.get("meta")
    if isinstance(meta, dict) and _mipro_meta_is_typed(meta):
        _fill(meta, MIPRO_META)
    modules = mipro.get("modules")
    if isinstance(modules, list) and _mipro_modules_are_typed(modules):
        for module in modules:
            module.setdefault("stages", [])
            for stage in module["stages"]:
                stage.setdefault("baseline_messages", [])
    seeds = mipro.get("seeds")
    if isinstance(seeds, dict) and all(_is_int_list(seeds[k]) for k in MIPRO_SEED_POOLS if k in seeds):
        for pool in MIPRO_SEED_POOLS:
            seeds.setdefault(pool, [])


def fill_prompt_learning_defaults(table: dict[str, Any]) -> dict[str, Any]:
    """Add 0.2.24's schema defaults to a copy-owned ``[prompt_learning]`` table, in place; return it."""
    if isinstance(table.get("initial_prompt"), dict):
        _initial_prompt(table["initial_prompt"])
    if isinstance(table.get("policy"), dict):
        _fill(table["policy"], POLICY)
        if isinstance(table["policy"].get("inference_url"), str):
            table["policy"]["inference_url"] = table["policy"]["inference_url"].strip()
    if isinstance(table.get("gepa"), dict):
        _gepa(table["gepa"])
    if isinstance(table.get("mipro"), dict):
        _mipro(table["mipro"])
    return table
