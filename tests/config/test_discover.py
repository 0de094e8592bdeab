"""Discovery: which TOMLs are found, which folders are skipped, and what each one is."""

from __future__ import annotations

import shutil
from pathlib import Path

from synth_nb.config import discover_configs

from ._samples import FIXTURES, MINIMAL_RL, MINIMAL_SFT


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_skips_virtualenvs_node_modules_hidden_and_site_packages(tmp_path: Path) -> None:
    keep = _write(tmp_path / "configs" / "rl.toml", MINIMAL_RL)
    for skipped in (".venv/x.toml", "venv/x.toml", "node_modules/pkg/x.toml", ".hidden/x.toml",
                    "lib/python3.11/site-packages/pkg/x.toml", "myenv/lib/x.toml", "configs/.draft.toml"):
        _write(tmp_path / skipped, MINIMAL_RL)
    _write(tmp_path / "myenv" / "pyvenv.cfg", "home = /usr/bin\n")
    _write(tmp_path / "notes.txt", "not toml")
    found = discover_configs(tmp_path)
    assert [item.path for item in found] == [keep]
    assert found[0].flow == "rl" and found[0].valid and found[0].error is None


def test_classifies_every_shipped_example_deterministically(tmp_path: Path) -> None:
    for source in sorted(FIXTURES.glob("*.toml")):
        shutil.copy(source, tmp_path / source.name)
    _write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n")
    _write(tmp_path / "broken.toml", "[a\n")
    _write(tmp_path / "sub" / "sft.toml", MINIMAL_SFT)
    first = discover_configs(tmp_path)
    assert first == discover_configs(tmp_path)
    assert [item.path for item in first] == sorted(item.path for item in first)
    by_name = {item.path.name: item for item in first}
    assert (by_name["banking77_gepa.toml"].flow, by_name["banking77_gepa.toml"].algorithm) == ("prompt_learning", "gepa")
    assert by_name["heartdisease_mipro_dspy.toml"].valid
    assert by_name["rl_from_base_qwen4b.toml"].valid and by_name["sft.toml"].flow == "sft"
    test = by_name["banking77_gepa_test.toml"]
    assert test.flow == "prompt_learning" and not test.valid
    assert test.error and ":57 [prompt_learning.gepa.evaluation]" in test.error
    assert by_name["pyproject.toml"].flow is None and by_name["pyproject.toml"].error == "not a training config"
    assert by_name["broken.toml"].flow is None and "invalid TOML" in (by_name["broken.toml"].error or "")
    assert not by_name["pyproject.toml"].is_training_config and by_name["sft.toml"].is_training_config


def test_empty_or_missing_folder(tmp_path: Path) -> None:
    assert discover_configs(tmp_path) == []
    assert discover_configs(tmp_path / "missing") == []


def test_a_job_bundle_copy_of_a_config_is_not_discovered(tmp_path: Path) -> None:
    """``results/<job>/config.toml`` beside ``run.json`` is a run's record; the list must not grow per run."""
    (tmp_path / "sft.toml").write_text(MINIMAL_SFT)
    bundle = tmp_path / "results" / "pl_0123456789abcdef"
    bundle.mkdir(parents=True)
    (bundle / "config.toml").write_text(MINIMAL_SFT)
    (bundle / "run.json").write_text("{}")
    (tmp_path / "results" / "other.toml").write_text(MINIMAL_SFT)  # no run.json beside it: a config
    assert [c.path.relative_to(tmp_path).as_posix() for c in discover_configs(tmp_path)] == \
        ["results/other.toml", "sft.toml"]
