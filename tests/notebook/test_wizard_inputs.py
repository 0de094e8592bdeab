"""``synth_nb.notebook.wizard_inputs``: discovery rows, prefills, override parsing."""

from __future__ import annotations

from pathlib import Path

from _wizard_support import make_project

from synth_nb.notebook.wizard_inputs import (
    OVERRIDE_SPECS,
    discover,
    env_files_in,
    parse_overrides,
    prefill_overrides,
)


def test_discover_lists_training_configs_with_badges_and_skips_other_toml(tmp_path: Path) -> None:
    make_project(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / ".synth_train_cell_abc.toml").write_text((tmp_path / "sft.toml").read_text())
    rows = {r["path"]: r for r in discover(tmp_path)}
    assert sorted(rows) == ["broken.toml", "gepa.toml", "sft.toml"]
    assert rows["sft.toml"] == {"path": "sft.toml", "flow": "sft", "algorithm": "", "valid": True, "error": "",
                                "warnings": []}
    assert rows["gepa.toml"]["algorithm"] == "gepa"
    assert rows["broken.toml"]["valid"] is False
    assert "trainer_mode" in rows["broken.toml"]["error"]
    assert "\n" not in rows["broken.toml"]["error"]


def test_discover_keeps_unparsable_toml_as_invalid(tmp_path: Path) -> None:
    (tmp_path / "oops.toml").write_text("[prompt_learning\nalgorithm = ")
    rows = discover(tmp_path)
    assert [r["path"] for r in rows] == ["oops.toml"]
    assert rows[0]["valid"] is False and rows[0]["error"]


def test_env_files_are_found_next_to_the_notebook(tmp_path: Path) -> None:
    for name in (".env", ".env.prod", "staging.env", "notes.txt"):
        (tmp_path / name).write_text("A=1\n")
    assert env_files_in(tmp_path) == [".env", ".env.prod", "staging.env"]


def test_prefill_reads_the_config_values(tmp_path: Path) -> None:
    make_project(tmp_path)
    assert prefill_overrides(tmp_path / "sft.toml") == {"model": "Qwen/Qwen3-0.6B", "dataset": "train.jsonl"}
    assert prefill_overrides(tmp_path / "gepa.toml") == {"task_url": "http://127.0.0.1:8102", "train_seeds": "0-2"}
    assert prefill_overrides(tmp_path / "broken.toml") == {}


def test_parse_overrides_types_values_and_flags_bad_ones() -> None:
    values, errors = parse_overrides({
        "model": " Qwen/Qwen3-4B ", "examples": "12", "allow_experimental": True, "task_url": "", "idempotency": "k1",
    })
    assert values == {"model": "Qwen/Qwen3-4B", "examples": 12, "allow_experimental": True, "idempotency": "k1"}
    assert errors == {}
    values, errors = parse_overrides({"examples": "ten", "task_url": "localhost:8102", "allow_experimental": "maybe"})
    assert values == {}
    assert set(errors) == {"examples", "task_url", "allow_experimental"}
    assert "whole number" in errors["examples"]
    _, errors = parse_overrides({"examples": "0"})
    assert errors == {"examples": "Must be at least 1."}


def test_override_specs_match_the_cli_flags() -> None:
    from synth_nb.pipeline.flags import TRAIN_ARGUMENTS

    dests = {spec.kwargs.get("dest") or spec.flags[0].lstrip("-").replace("-", "_") for spec in TRAIN_ARGUMENTS}
    assert {spec["name"] for spec in OVERRIDE_SPECS} <= dests
