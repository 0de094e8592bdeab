"""Values the loader rejects whatever the field: inf/nan, numbers written as strings, booleans for integers,
bad seeds, unknown GPU types, documents nested too deeply. Each error names the dotted key (and the line
when the TOML text is known)."""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from synth_nb.config import ConfigError, load_config_text, validate_config
from synth_nb.config._source import parse_toml_text
from synth_nb.flows.registry import get_flow

from ._samples import MINIMAL_GEPA, MINIMAL_MIPRO, MINIMAL_RL, MINIMAL_SFT

MINIMAL = {"prompt_learning": MINIMAL_GEPA, "rl": MINIMAL_RL, "sft": MINIMAL_SFT}
KeyPath = tuple[str | int, ...]


def _unwrap(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _unwrap(args[0]) if len(args) == 1 else annotation
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    return annotation


def _numeric_fields(model: type[BaseModel], prefix: KeyPath = ()) -> Iterator[tuple[KeyPath, bool]]:
    """Every int/float field of a schema, as ``(path, is_list)``; lists of tables get index 0."""
    for name, info in model.model_fields.items():
        annotation = _unwrap(info.annotation)
        path = (*prefix, name)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _numeric_fields(annotation, path)
        elif typing.get_origin(annotation) is list:
            (item,) = typing.get_args(annotation)
            item = _unwrap(item)
            if isinstance(item, type) and issubclass(item, BaseModel):
                yield from _numeric_fields(item, (*path, 0))
            elif item in (int, float):
                yield path, True
        elif annotation in (int, float):
            yield path, False


def _set(doc: dict[str, Any], path: KeyPath, value: Any) -> None:
    node: Any = doc
    for part, following in zip(path, path[1:], strict=False):
        if isinstance(following, int):
            node = node.setdefault(part, [{}]) if isinstance(part, str) else node[part]
            if not node:
                node.append({})
        else:
            node = node.setdefault(part, {}) if isinstance(part, str) else node[part]
            if not isinstance(node, dict):
                raise AssertionError(path)
    node[path[-1]] = value


def _cases() -> list[tuple[str, KeyPath, bool]]:
    out = []
    for flow in ("prompt_learning", "rl", "sft"):
        for path, is_list in _numeric_fields(get_flow(flow).config_model):
            out.append((flow, path, is_list))
    return out


CASES = _cases()


def test_every_flow_has_numeric_fields_to_check() -> None:
    flows = {flow for flow, _, _ in CASES}
    assert flows == {"prompt_learning", "rl", "sft"} and len(CASES) > 150


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan], ids=["inf", "-inf", "nan"])
@pytest.mark.parametrize(("flow", "path", "is_list"), CASES, ids=[".".join(map(str, c[1])) for c in CASES])
def test_non_finite_numbers_are_rejected_in_every_numeric_field(flow: str, path: KeyPath, is_list: bool,
                                                               bad: float) -> None:
    raw = parse_toml_text(MINIMAL[flow])
    _set(raw, path, [1, bad] if is_list else bad)
    with pytest.raises(ConfigError) as info:
        validate_config(raw, path="cfg.toml")
    problems = info.value.problems
    assert len(problems) == 1
    expected_key = ".".join(str(p) for p in path).replace(".0.", "[0].") + ("[1]" if is_list else "")
    assert problems[0].key == expected_key
    assert "finite number" in problems[0].message


def test_non_finite_error_names_file_line_and_key() -> None:
    text = MINIMAL_GEPA.replace('model = "llama-3.1-8b-instant"\n',
                                'model = "llama-3.1-8b-instant"\ntemperature = inf\n')
    with pytest.raises(ConfigError) as info:
        load_config_text(text, "cfg.toml")
    (problem,) = info.value.problems
    assert (problem.key, problem.line, str(problem.path)) == ("prompt_learning.policy.temperature", 10, "cfg.toml")
    assert str(info.value).startswith("cfg.toml: invalid config (1 problem)")


def test_non_finite_numbers_in_free_tables_are_rejected_too() -> None:
    text = MINIMAL_GEPA + "\n[prompt_learning.env_config]\ndeep = [{x = 1}, {x = nan}]\n"
    with pytest.raises(ConfigError) as info:
        load_config_text(text, "cfg.toml")
    (problem,) = info.value.problems
    assert (problem.key, problem.line) == ("prompt_learning.env_config.deep[1].x", 16)


@pytest.mark.parametrize(
    ("flow", "old", "new", "key", "words"),
    [
        ("prompt_learning", 'model = "llama-3.1-8b-instant"', 'model = "llama-3.1-8b-instant"\nmax_completion_tokens = "64"',
         "prompt_learning.policy.max_completion_tokens", "without quotes: max_completion_tokens = 64"),
        ("prompt_learning", 'model = "llama-3.1-8b-instant"', 'model = "llama-3.1-8b-instant"\ntemperature = "0.5"',
         "prompt_learning.policy.temperature", "without quotes"),
        ("sft", "gpu_count = 1", 'gpu_count = "1"', "compute.gpu_count", "must be an integer (got a string)"),
        ("sft", "gpu_count = 1", "gpu_count = true", "compute.gpu_count", "must be an integer (got a boolean)"),
        ("sft", "gpu_count = 1", "gpu_count = 1.0", "compute.gpu_count", "must be an integer (got a number)"),
        ("rl", "max_turns = 1", "max_turns = 1.5", "rollout.max_turns", "must be an integer"),
        ("rl", "max_turns = 1", 'max_turns = "one"', "rollout.max_turns", "must be an integer (got a string)"),
        ("rl", 'label = "my-rl-run"', "label = 7", "model.label", "must be a string (got an integer)"),
        ("prompt_learning", 'provider = "groq"', 'provider = "groq"\ntemperature = false',
         "prompt_learning.policy.temperature", "must be a number (got a boolean)"),
    ],
)
def test_values_are_not_coerced(flow: str, old: str, new: str, key: str, words: str) -> None:
    text = MINIMAL[flow].replace(old, new, 1)
    assert text != MINIMAL[flow]
    with pytest.raises(ConfigError) as info:
        load_config_text(text, "cfg.toml")
    found = {p.key: p for p in info.value.problems}
    assert key in found, info.value
    assert words in str(found[key]) and found[key].line


SEED_LISTS = [
    (MINIMAL_GEPA, "train_seeds = [0, 1, 2]", "train_seeds = {}", "prompt_learning.gepa.evaluation.train_seeds"),
    (MINIMAL_GEPA, "val_seeds = [3, 4]", "val_seeds = {}", "prompt_learning.gepa.evaluation.val_seeds"),
    (MINIMAL_MIPRO, "online_pool = [3, 4, 5]", "online_pool = {}", "prompt_learning.mipro.online_pool"),
    (MINIMAL_MIPRO, "bootstrap_train_seeds = [0, 1, 2]", "bootstrap_train_seeds = {}",
     "prompt_learning.mipro.bootstrap_train_seeds"),
    (MINIMAL_RL, "max_concurrent_rollouts = 4", "max_concurrent_rollouts = 4\n\n[evaluation]\ninstances = 2\n"
     "every_n_iters = 1\nseeds = {}", "evaluation.seeds"),
]


@pytest.mark.parametrize(("seeds", "index", "words"), [
    ("[true, false]", 0, "must be an integer (got a boolean)"),
    ("[0, -1]", 1, "must be >= 0"),
    ("[1, 9223372036854775808]", 1, "integer out of range"),
    ('["1", 2]', 0, "must be an integer (got a string)"),
    ("[1.5]", 0, "must be an integer (got a number)"),
])
@pytest.mark.parametrize(("base", "old", "template", "key"), SEED_LISTS, ids=[s[3] for s in SEED_LISTS])
def test_bad_seed_lists_are_rejected(base: str, old: str, template: str, key: str, seeds: str, index: int,
                                     words: str) -> None:
    text = base.replace(old, template.format(seeds), 1)
    with pytest.raises(ConfigError) as info:
        load_config_text(text, "cfg.toml")
    found = {p.key: p for p in info.value.problems}
    assert f"{key}[{index}]" in found, info.value
    assert words in found[f"{key}[{index}]"].message


def test_largest_int64_seed_is_accepted() -> None:
    text = MINIMAL_GEPA.replace("train_seeds = [0, 1, 2]", "train_seeds = [0, 9223372036854775807]")
    assert load_config_text(text).model.prompt_learning.gepa.evaluation.train_seeds == [0, 2**63 - 1]


@pytest.mark.parametrize("flow", ["rl", "sft"])
def test_unknown_gpu_type_is_rejected(flow: str) -> None:
    text = MINIMAL[flow].replace('gpu_type = "H100"', 'gpu_type = "TOASTER"')
    with pytest.raises(ConfigError) as info:
        load_config_text(text, "cfg.toml")
    (problem,) = info.value.problems
    assert problem.key == "compute.gpu_type" and problem.line
    assert "'TOASTER'" in problem.message and "H100" in (problem.hint or "")


def test_gpu_type_matches_any_casing_and_is_kept_as_written() -> None:
    loaded = load_config_text(MINIMAL_SFT.replace('gpu_type = "H100"', 'gpu_type = "h200"'))
    assert loaded.raw["compute"]["gpu_type"] == "h200"


@pytest.mark.parametrize("depth", [65, 200, 500, 5000])
@pytest.mark.parametrize("kind", ["array", "inline table"])
def test_deep_nesting_is_one_clear_error(depth: int, kind: str) -> None:
    value = "[" * depth + "]" * depth if kind == "array" else "{a = " * depth + "1" + "}" * depth
    text = MINIMAL_GEPA + f"\n[prompt_learning.env_config]\nx = {value}\n"
    with pytest.raises(ConfigError) as info:
        load_config_text(text, "cfg.toml")
    error = info.value
    assert "nested" in str(error)
    located = error.problems[0] if error.problems else error
    assert located.line == 16


def test_deep_python_documents_are_rejected_without_recursion() -> None:
    raw = parse_toml_text(MINIMAL_GEPA)
    node: dict[str, Any] = raw["prompt_learning"].setdefault("env_config", {})
    for _ in range(20_000):
        node = node.setdefault("a", {})
    with pytest.raises(ConfigError, match="nested more than 64 levels"):
        validate_config(raw, path="cfg.toml")


def test_problems_are_capped_and_counted() -> None:
    text = MINIMAL_GEPA + "\n[prompt_learning.env_config]\n" + "".join(f"k{i} = nan\n" for i in range(50))
    with pytest.raises(ConfigError) as info:
        load_config_text(text, "cfg.toml")
    assert len(info.value.problems) == 20
