"""load_config end to end: every shipped example, bad input of every kind, and fuzzing that shows the
loader only ever raises ConfigError."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synth_nb.config import ConfigError, LoadedConfig, load_config, load_config_text, validate_config
from synth_nb.config._source import KeyLines, parse_toml_text

from ._samples import FIXTURES, INVALID_EXAMPLES, MINIMAL_GEPA, MINIMAL_SFT, VALID_EXAMPLES

EXPECTED_FLOWS = {
    "banking77_gepa.toml": ("prompt_learning", "gepa"),
    "banking77_mipro.toml": ("prompt_learning", "mipro"),
    "crafter_fft_4b.toml": ("sft", None),
    "crafter_sft_qwen30b_lora.toml": ("sft", None),
    "heartdisease_gepa_local.toml": ("prompt_learning", "gepa"),
    "heartdisease_mipro_dspy.toml": ("prompt_learning", "mipro"),
    "rl_from_base_qwen4b.toml": ("rl", None),
}


@pytest.mark.parametrize("name", VALID_EXAMPLES)
def test_valid_shipped_examples_load(name: str) -> None:
    loaded = load_config(FIXTURES / name)
    assert isinstance(loaded, LoadedConfig)
    assert (loaded.flow, loaded.algorithm) == EXPECTED_FLOWS[name]
    assert loaded.raw == parse_toml_text((FIXTURES / name).read_text(encoding="utf-8"))
    assert all(isinstance(w, str) and w for w in loaded.warnings)


@pytest.mark.parametrize("name", INVALID_EXAMPLES)
def test_invalid_shipped_examples_give_precise_errors(name: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(FIXTURES / name)
    err = info.value
    assert err.path == FIXTURES / name and err.problems
    for problem in err.problems:
        assert problem.path == FIXTURES / name and problem.key and problem.line and problem.hint


def test_line_of_on_a_loaded_config() -> None:
    loaded = load_config(FIXTURES / "banking77_mipro.toml")
    assert loaded.line_of("prompt_learning.mipro.online_pool") == 49
    assert loaded.line_of("display.show_curve") == 61
    assert loaded.line_of("prompt_learning.mipro.no_such_key") == 33
    assert loaded.line_of("prompt_learning.mipro.no_such_key", exact=True) is None


# -- variants of shipped examples that 0.2.24 rejected, each with a precise message -----------

def _shipped(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_missing_inference_mode_like_24_shipped_examples() -> None:
    text = _shipped("banking77_gepa.toml").replace('inference_mode = "synth_hosted"\n', "")
    with pytest.raises(ConfigError) as info:
        load_config_text(text, "hotpotqa_gepa_local.toml")
    [problem] = info.value.problems
    assert (problem.key, problem.line) == ("prompt_learning.policy.inference_mode", 26)


def test_unsupported_groq_model_like_the_pipeline_examples() -> None:
    text = _shipped("banking77_gepa.toml").replace('model = "llama-3.1-8b-instant"',
                                                   'model = "llama3-groq-70b-8192-tool-use-preview"')
    with pytest.raises(ConfigError) as info:
        load_config_text(text, "banking77_pipeline_gepa_local.toml")
    [problem] = info.value.problems
    assert (problem.key, problem.line) == ("prompt_learning.policy.model", 28)


def test_multiline_inline_table_like_banking77_pipeline_mipro_test(tmp_path: Path) -> None:
    path = tmp_path / "banking77_pipeline_mipro_test.toml"
    path.write_text(MINIMAL_GEPA + 'modules = [{\n  module_id = "x"\n}]\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.line == 14 and info.value.column == 13 and not info.value.problems


def test_undetectable_rl_config_like_rl_from_ft() -> None:
    with pytest.raises(ConfigError) as info:
        load_config_text('type = "rl"\n[model]\nsource = "ft:x"\n', "rl_from_ft.toml")
    assert "[prompt_learning]" in (info.value.hint or "") and "[algorithm]" in (info.value.hint or "")


def test_sft_lacking_job_data_like_crafter_fft_qwen0p6b() -> None:
    text = _shipped("crafter_fft_4b.toml").replace('data = "ft_data/crafter_sft.jsonl"\n', "")
    loaded = load_config_text(text, "crafter_fft_qwen0p6b.toml")
    assert loaded.model.dataset is None and any("--dataset" in w for w in loaded.warnings)


# -- bad input --------------------------------------------------------------------------------------------

def test_malformed_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "cfg.toml"
    path.write_text(MINIMAL_SFT + "\n[job\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.line == 14 and info.value.column is not None


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "cfg.toml"
    path.write_bytes(MINIMAL_SFT.encode() + b'\n[tags]\nnote = "\xff\xfe"\n')
    with pytest.raises(ConfigError, match="UTF-8") as info:
        load_config(path)
    assert info.value.line == 15


def test_wrong_types_are_all_listed() -> None:
    text = MINIMAL_SFT.replace("gpu_count = 1", 'gpu_count = "one"').replace('model = "Qwen/Qwen3-0.6B"', "model = 4")
    with pytest.raises(ConfigError) as info:
        load_config_text(text, "cfg.toml")
    assert {(p.key, p.line) for p in info.value.problems} == {("job.model", 7), ("compute.gpu_count", 12)}
    assert "2 problems" in info.value.message


@pytest.mark.parametrize("text", ["", 'title = "x"\n', "[tool.ruff]\nline-length = 1\n", "[algorithm]\ntype = 'batch'\n"])
def test_unknown_flow(text: str) -> None:
    with pytest.raises(ConfigError, match="not a training config") as info:
        load_config_text(text, "cfg.toml")
    assert "[job] with [compute]" in (info.value.hint or "")


@pytest.mark.parametrize(
    "raw",
    [None, [], {1: "x"}, {"prompt_learning": {"algorithm": None}}, {"algorithm": {"type": "online", "m": object()}},
     {"job": {"model": {1, 2}}, "compute": {"a": 1}}],
)
def test_documents_tomllib_cannot_produce_are_config_errors(raw: Any) -> None:
    with pytest.raises(ConfigError):
        validate_config(raw, path="x.toml")


# -- fuzzing ------------------------------------------------------------------------------------------------

_KEYS = st.sampled_from(["prompt_learning", "algorithm", "gepa", "mipro", "policy", "model", "job", "compute",
                         "rollout", "type", "method", "variety", "seeds", "evaluation", "provider", "data",
                         "online_pool", "bootstrap_train_seeds", "task_app_url", "a b", 'q"t', "x.y"]) | st.text(max_size=8)
_SCALARS = (st.text(max_size=12) | st.integers(min_value=-(2**63), max_value=2**63 - 1)
            | st.floats(allow_nan=True) | st.booleans()
            | st.sampled_from(["online", "offline", "gepa", "mipro", "policy_gradient", "sft", "gspo", "fft",
                               "Qwen/Qwen3-4B", "groq", "openai", "synth_hosted", "http://127.0.0.1:1"]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
                       max_leaves=25)
_DOCS = st.dictionaries(_KEYS, _VALUES, max_size=6)


def _assert_only_config_errors(call: Any) -> LoadedConfig | None:
    try:
        return call()
    except ConfigError as exc:
        assert str(exc)
        return None


_SHIPPED_LINES = sorted({line for name in VALID_EXAMPLES + INVALID_EXAMPLES
                         for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines()})
_TOMLISH_TEXT = st.lists(st.sampled_from(_SHIPPED_LINES) | st.text(max_size=30), max_size=40).map("\n".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400) | _TOMLISH_TEXT)
def test_arbitrary_text_only_raises_config_error(text: str) -> None:
    _assert_only_config_errors(lambda: load_config_text(text, "fuzz.toml"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_DOCS)
def test_arbitrary_dicts_only_raise_config_error(raw: dict[str, Any]) -> None:
    _assert_only_config_errors(lambda: validate_config(raw, path="fuzz.toml"))


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _set_path(doc: Any, path: tuple, value: Any, delete: bool) -> None:
    for part in path[:-1]:
        doc = doc[part]
    if delete and isinstance(doc, dict):
        del doc[path[-1]]
    else:
        doc[path[-1]] = value


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(VALID_EXAMPLES + INVALID_EXAMPLES), st.data())
def test_mutated_shipped_examples_only_raise_config_error(name: str, data: st.DataObject) -> None:
    text = _shipped(name)
    raw = parse_toml_text(text)
    for _ in range(data.draw(st.integers(min_value=1, max_value=4))):
        paths = _paths(raw)
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        _set_path(raw, path, data.draw(_VALUES), delete=data.draw(st.booleans()))
    _assert_only_config_errors(lambda: validate_config(raw, path=name, text=text))


# a tiny TOML writer, so generated documents exercise headers, [[arrays]], quoted keys and inline tables

def _key(k: str) -> str:
    return json.dumps(k, ensure_ascii=False).replace("\x7f", "\\u007f")


def _inline(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return _key(v)
    if isinstance(v, list):
        return "[" + ", ".join(_inline(x) for x in v) + "]"
    return "{" + ", ".join(f"{_key(k)} = {_inline(x)}" for k, x in v.items()) + "}"


def _emit(table: dict, header: tuple[str, ...], out: list[str]) -> None:
    subtables = []
    for k, v in table.items():
        if isinstance(v, dict) or (isinstance(v, list) and v and all(isinstance(x, dict) for x in v)):
            subtables.append((k, v))
        else:
            out.append(f"{_key(k)} = {_inline(v)}")
    for k, v in subtables:
        path = (*header, _key(k))
        if isinstance(v, dict):
            out.append(f"[{'.'.join(path)}]")
            _emit(v, path, out)
        else:
            for item in v:
                out.append(f"[[{'.'.join(path)}]]")
                _emit(item, path, out)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_DOCS)
def test_generated_toml_text_loads_or_fails_cleanly_and_every_key_has_a_line(raw: dict[str, Any]) -> None:
    lines: list[str] = []
    _emit(raw, (), lines)
    text = "\n".join(lines) + "\n"
    parsed = parse_toml_text(text)
    locator = KeyLines(text)
    for path in _paths(parsed):
        assert locator.line_of(path, exact=True) is not None, (path, text)
    _assert_only_config_errors(lambda: load_config_text(text, "fuzz.toml"))


# -- the validated model dumps to what synth-ai 0.2.24 sent ---------------------------------------------------

_PARITY = Path(__file__).parent.parent / "flows" / "fixtures"  # 0.2.24 builder outputs, shared with tests/flows
_PARITY_CASES = sorted(p for p in (_PARITY / "expected").glob("*.json") if "--" not in p.stem
                       and json.loads(p.read_text())["flow"] in ("rl", "prompt_learning"))


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_parity_cases_cover_both_flows() -> None:
    assert len(_PARITY_CASES) >= 60


@pytest.mark.parametrize("case", _PARITY_CASES, ids=lambda p: p.stem[:70])
def test_model_dump_equals_what_0_2_24_sent(case: Path) -> None:
    """Every RL / prompt-learning config 0.2.24 accepts: ``model_dump(exclude_none=True)`` is its body's
    config section, apart from the values its builder injects (task URL/key, copied seeds, placements)."""
    expected = json.loads(case.read_text())
    loaded = load_config(_PARITY / "configs" / f"{case.stem}.toml")
    raw = loaded.raw
    if expected["flow"] == "prompt_learning":
        mine = loaded.model.prompt_learning.model_dump(exclude_none=True)
        sent = expected["body"]["config_body"]["prompt_learning"]
        injected = {"task_app_url", "task_app_api_key", "train_seeds", "evaluation_seeds", "env_name"}
        injected -= set(raw["prompt_learning"])
        injected |= {"task_app_url", "task_app_api_key"}
    else:
        mine = loaded.model.model_dump(exclude_none=True)
        mine.pop("smoke", None)
        sent = json.loads(json.dumps(expected["body"]["data"]["config"]))
        sent["services"].pop("task_url")
        mine.get("services", {}).pop("task_url", None)
        if "services" not in raw:
            sent.pop("services")
        if "placement" not in raw.get("reference", {}):
            sent["reference"].pop("placement")
            if not sent["reference"] and "reference" not in raw:
                sent.pop("reference")
        topology = sent["compute"].get("topology", {})
        if "reference_placement" not in raw["compute"].get("topology", {}):
            topology.pop("reference_placement", None)
            if not topology and "topology" not in raw["compute"]:
                sent["compute"].pop("topology")
        injected = set()
    for key in injected:
        mine.pop(key, None)
        sent.pop(key, None)
    assert _json_equal(mine, sent)
