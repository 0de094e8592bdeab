"""Cross-field rules of 0.2.24's prompt-learning validator and builder, plus the
deliberate fix that moves MIPRO seed pools written at ``[prompt_learning]`` level into the mipro table."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from synth_nb.backend import url_problem
from synth_nb.flows import catalogue
from synth_nb.flows.prompt_learning.config import (
    GepaConfig,
    MiproConfig,
    PromptLearningConfig,
    PromptLearningSection,
)
from synth_nb.flows.schema import Problem, warning

__all__ = ["MIPRO_POOLS", "check_prompt_learning", "normalise_prompt_learning"]

MIPRO_POOLS = ("bootstrap_train_seeds", "online_pool", "test_pool", "reference_pool")
_FORBIDDEN_POLICY_KEYS = ("inference_url", "api_base", "base_url")
PL = "prompt_learning"


def normalise_prompt_learning(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Copy MIPRO seed pools written at ``[prompt_learning]`` level into ``[prompt_learning.mipro]``.

    0.2.24's builder copies them too, except ``bootstrap_train_seeds`` / ``online_pool``, which its
    validator accepts at the top level but its builder then asserts on; those get a note.
    """
    section = raw.get(PL)
    if not isinstance(section, Mapping) or section.get("algorithm") != "mipro":
        return raw, []
    mipro = section.get("mipro")
    if not isinstance(mipro, Mapping):
        return raw, []
    copied = [k for k in MIPRO_POOLS if k in section and k not in mipro]
    shadowed = [k for k in MIPRO_POOLS if k in section and k in mipro and section[k] != mipro[k]]
    notes = [f"{PL}.{k} differs from [{PL}.mipro].{k}; the mipro value is used" for k in shadowed]
    if not copied:
        return raw, notes
    out = copy.deepcopy(raw)
    for key in copied:
        out[PL]["mipro"][key] = copy.deepcopy(out[PL][key])
    fixed = [k for k in copied if k in ("bootstrap_train_seeds", "online_pool")]
    if fixed:
        notes.insert(0, f"using {', '.join(f'{PL}.{k}' for k in fixed)} as [{PL}.mipro] seed pools, where the "
                        "MIPRO builder reads them (synth-ai 0.2.24 crashed on this layout)")
    return out, notes


def check_prompt_learning(cfg: PromptLearningConfig, raw: Mapping[str, Any]) -> list[Problem]:
    """Problems (and warnings) of a structurally valid prompt-learning config."""
    pl = cfg.prompt_learning
    problems: list[Problem] = []
    url_wrong = url_problem(pl.task_app_url)
    if url_wrong:
        problems.append(Problem((PL, "task_app_url"), f"the task app URL {url_wrong}",
                                "set it to your task app's base URL, e.g. \"http://127.0.0.1:8102\""))
    raw_policy = raw.get(PL, {}).get("policy", {})
    for key in _FORBIDDEN_POLICY_KEYS:
        if key in raw_policy:
            problems.append(Problem((PL, "policy", key), f"{key} must not be set in [{PL}.policy]",
                                    f"remove {key}: the trainer provides the inference URL in rollout requests"))
    prompt = pl.initial_prompt
    if prompt is not None and "messages" in prompt.model_fields_set and not prompt.messages:
        problems.append(Problem((PL, "initial_prompt", "messages"), "messages must not be empty",
                                f"add [[{PL}.initial_prompt.messages]] entries with role and pattern, "
                                "or remove messages"))
    why = catalogue.check_provider_model(pl.policy.provider, pl.policy.model)
    if why:
        problems.append(Problem((PL, "policy", "model"), why, "pick a supported model for this provider"))
    if pl.algorithm == "gepa":
        if pl.gepa is None:
            problems.append(Problem((PL, "gepa"), f"[{PL}.gepa] is required when algorithm is 'gepa'",
                                    f"add [{PL}.gepa.evaluation] with train_seeds and val_seeds"))
        else:
            problems.extend(_gepa_problems(pl.gepa, pl))
    else:
        if pl.mipro is None:
            problems.append(Problem((PL, "mipro"), f"[{PL}.mipro] is required when algorithm is 'mipro'",
                                    f"add [{PL}.mipro] with bootstrap_train_seeds and online_pool"))
        else:
            problems.extend(_mipro_problems(pl.mipro))
    key = pl.task_app_api_key.get_secret_value() if pl.task_app_api_key is not None else ""
    if key.strip().startswith("${"):
        problems.append(warning(f"{PL}.task_app_api_key is a literal placeholder (not expanded); "
                                "ENVIRONMENT_API_KEY from the environment is sent instead"))
    return problems


def _proposer_problem(key: tuple[str | int, ...], model: str, provider: str | None,
                      provider_key: str) -> Problem | None:
    if provider is None:
        return Problem((*key[:-1], provider_key), f"{provider_key} is required when {key[-1]} is set",
                       f"set {provider_key} = \"groq\", \"openai\" or \"google\"")
    why = catalogue.check_provider_model(provider, model, allow_nano=False)
    return Problem(key, why, "pick a supported, non-nano model for this provider") if why else None


def _gepa_problems(gepa: GepaConfig, pl: PromptLearningSection) -> list[Problem]:
    base = (PL, "gepa")
    out: list[Problem] = []
    ev = gepa.evaluation
    if ev is None:
        hint = f"add [{PL}.gepa.evaluation] with train_seeds = [...] and val_seeds = [...]"
        misplaced = [f"{PL}.gepa.{k}" for k in ("evaluation_seeds", "validation_seeds") if getattr(gepa, k)]
        misplaced += [f"{PL}.{k}" for k in ("evaluation_seeds", "validation_seeds") if k in (pl.model_extra or {})
                      or getattr(pl, k, None)]
        if misplaced:
            hint += f"; {', '.join(misplaced)} are not read by the GEPA builder, move them there"
        out.append(Problem((*base, "evaluation"), "missing table: GEPA needs its training and validation seeds",
                           hint))
    else:
        if not (ev.train_seeds or ev.seeds):
            out.append(Problem((*base, "evaluation", "train_seeds"), "training seeds are missing",
                               "set train_seeds = [0, 1, 2, ...] (or seeds) in the evaluation table"))
        if not (ev.val_seeds or ev.validation_seeds):
            out.append(Problem((*base, "evaluation", "val_seeds"), "validation seeds are missing",
                               "set val_seeds = [...] (or validation_seeds) in the evaluation table"))
    if gepa.proposer_type == "spec" and not gepa.spec_path:
        out.append(Problem((*base, "spec_path"), "spec_path is required when proposer_type = 'spec'",
                           "set spec_path to your system spec JSON, or use proposer_type = \"dspy\""))
    mutation = gepa.mutation
    if mutation is not None and mutation.llm_model:
        provider = mutation.llm_provider if "llm_provider" in mutation.model_fields_set else None
        found = _proposer_problem((*base, "mutation", "llm_model"), mutation.llm_model, provider, "llm_provider")
        out.extend([found] if found else [])
    if gepa.mutation_llm_model:
        found = _proposer_problem((*base, "mutation_llm_model"), gepa.mutation_llm_model,
                                  gepa.mutation_llm_provider, "mutation_llm_provider")
        out.extend([found] if found else [])
    eps = gepa.archive.pareto_eps if gepa.archive is not None else gepa.pareto_eps
    if eps is not None and eps >= 1.0:
        key = ("archive", "pareto_eps") if gepa.archive is not None else ("pareto_eps",)
        out.append(Problem((*base, *key), "pareto_eps should be < 1.0", "typically 1e-6"))
    pressure = gepa.population.selection_pressure if gepa.population is not None else gepa.selection_pressure
    if pressure is not None and pressure < 1.0:
        key = ("population", "selection_pressure") if gepa.population is not None else ("selection_pressure",)
        out.append(Problem((*base, *key), "selection_pressure must be >= 1.0", "use 1.0 or more"))
    counting = gepa.token.counting_model if gepa.token is not None else gepa.token_counting_model
    if counting is not None and not counting.strip():
        out.append(Problem((*base, "token", "counting_model"), "must be a non-empty model name", "e.g. \"gpt-4\""))
    out.extend(_gepa_module_problems(gepa, pl.initial_prompt.metadata if pl.initial_prompt else None))
    return out


def _gepa_module_problems(gepa: GepaConfig, prompt_metadata: Mapping[str, Any] | None) -> list[Problem]:
    base = (PL, "gepa", "modules")
    out: list[Problem] = []
    modules = gepa.modules or []
    for i, module in enumerate(modules):
        if not module.module_id.strip():
            out.append(Problem((*base, i, "module_id"), "module_id must not be empty", "name the module"))
        tools = module.allowed_tools
        if tools is not None and (not tools or any(not t.strip() for t in tools) or len(set(tools)) != len(tools)):
            out.append(Problem((*base, i, "allowed_tools"), "allowed_tools must be a non-empty list of unique, "
                               "non-empty tool names", "list the tools, or remove allowed_tools"))
    pipeline = prompt_metadata.get("pipeline_modules") if isinstance(prompt_metadata, Mapping) else None
    if isinstance(pipeline, list) and pipeline:
        if not modules:
            out.append(Problem(base, f"[[{PL}.gepa.modules]] is required for a multi-stage pipeline",
                               "add one [[prompt_learning.gepa.modules]] per initial_prompt.metadata.pipeline_modules"))
        else:
            ids = {m.module_id.strip() for m in modules} | {str(getattr(m, "stage_id", "")) for m in modules}
            for entry in pipeline:
                name = entry
                if isinstance(entry, Mapping):
                    name = entry.get("name") or entry.get("module_id") or entry.get("stage_id")
                if str(name) not in ids:
                    out.append(Problem(base, f"pipeline module {name!r} has no [[{PL}.gepa.modules]] entry",
                                       f"add a module with module_id = \"{name}\""))
    return out


def _pools(mipro: MiproConfig) -> dict[str, list[int]]:
    return {k: getattr(mipro, k) or [] for k in MIPRO_POOLS}


def _mipro_problems(mipro: MiproConfig) -> list[Problem]:
    base = (PL, "mipro")
    out: list[Problem] = []
    pools = _pools(mipro)
    for key in ("bootstrap_train_seeds", "online_pool"):
        if getattr(mipro, key) is None:
            out.append(Problem((*base, key), f"{key} is required",
                               f"set {key} = [0, 1, 2, ...] in [{PL}.mipro]"))
        elif not pools[key]:
            out.append(Problem((*base, key), f"{key} cannot be empty", "list at least one seed"))
    overlap = sorted(set(pools["reference_pool"]) & set(
        pools["bootstrap_train_seeds"] + pools["online_pool"] + pools["test_pool"]))
    if overlap:
        out.append(Problem((*base, "reference_pool"), f"reference_pool seeds overlap bootstrap/online/test pools: "
                           f"{overlap[:10]}", "use seeds that appear in no other pool"))
    if "meta_model" in mipro.model_fields_set:
        provider = mipro.meta_model_provider if "meta_model_provider" in mipro.model_fields_set else None
        found = _proposer_problem((*base, "meta_model"), mipro.meta_model, provider, "meta_model_provider")
        out.extend([found] if found else [])
    out.extend(_mipro_module_problems(mipro))
    return out


def _mipro_module_problems(mipro: MiproConfig) -> list[Problem]:
    base = (PL, "mipro", "modules")
    out: list[Problem] = []
    max_instr = mipro.max_instruction_sets or 128
    max_demo = mipro.max_demo_sets or 128
    module_ids: set[str] = set()
    stage_ids: set[str] = set()
    for i, module in enumerate(mipro.modules or []):
        mid = module.module_id or str(getattr(module, "id", None) or f"module_{i}")
        if mid in module_ids:
            out.append(Problem((*base, i, "module_id"), f"duplicate module id {mid!r}", "module ids must be unique"))
        module_ids.add(mid)
        own: set[str] = set()
        for j, stage in enumerate(module.stages or []):
            sid = stage.stage_id or str(getattr(stage, "module_stage_id", None) or f"stage_{j}")
            if sid in stage_ids:
                out.append(Problem((*base, i, "stages", j, "stage_id"), f"duplicate stage id {sid!r}",
                                   "stage ids must be unique across all modules"))
            stage_ids.add(sid)
            own.add(sid)
            if stage.max_instruction_slots is not None and stage.max_instruction_slots > max_instr:
                out.append(Problem((*base, i, "stages", j, "max_instruction_slots"),
                                   f"must be between 1 and {max_instr}", "lower it or raise max_instruction_sets"))
            if stage.max_demo_slots is not None and stage.max_demo_slots > max_demo:
                out.append(Problem((*base, i, "stages", j, "max_demo_slots"),
                                   f"must be between 0 and {max_demo}", "lower it or raise max_demo_sets"))
        for k, edge in enumerate(module.edges or []):
            ends = _edge_ends(edge)
            if ends is None or not set(ends) <= own:
                out.append(Problem((*base, i, "edges", k), "an edge must be [from, to] or {from, to} naming "
                                   "stage ids of this module", f"known stage ids: {sorted(own)}"))
    return out


def _edge_ends(edge: Any) -> tuple[str, str] | None:
    if isinstance(edge, list) and len(edge) == 2:
        return str(edge[0]), str(edge[1])
    if isinstance(edge, Mapping):
        start, end = edge.get("from", edge.get("source")), edge.get("to", edge.get("target"))
        if start is not None and end is not None:
            return str(start), str(end)
    return None
