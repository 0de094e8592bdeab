"""Job-creation bodies are JSON-equal to synth-ai 0.2.24's for every config 0.2.24 accepts.

``fixtures/expected/*.json`` were produced by 0.2.24's own builders (``fixtures/generate_expected.py``)
over every example TOML shipped in its wheel, the reference examples, and ``fixtures/synthetic/``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from synth_nb.config import load_config
from synth_nb.flows import plan_for
from synth_nb.flows.overrides import Overrides

from .conftest import VALID_LINE, bundle, stub_config

FIXTURES = Path(__file__).parent / "fixtures"
EXPECTED = sorted((FIXTURES / "expected").glob("*.json"))
CANARY = "sk_env_CANARY_parity_0123456789"  # the ENVIRONMENT_API_KEY the fixtures were generated with


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (1 == 1.0), but booleans are not numbers; dict order ignored."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _prepare(tmp_path: Path, fixture: Path) -> tuple[Path, dict[str, Any]]:
    expected = json.loads(fixture.read_text())
    base = fixture.stem.split("--")[0]
    config_path = tmp_path / f"{base}.toml"
    shutil.copyfile(FIXTURES / "configs" / f"{base}.toml", config_path)
    if expected["flow"] == "sft":
        raw = stub_config(config_path).raw
        for rel in (raw["job"].get("data"), raw["job"].get("data_path"), raw.get("data", {}).get("validation_path")):
            if isinstance(rel, str) and not Path(rel).is_absolute():
                (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / rel).write_text(VALID_LINE)
    return config_path, expected


def test_fixture_inventory() -> None:
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    accepted = {e["source"] for e in manifest if e["verdict"] == "accepted"}
    wheel = {s for s in accepted if s.startswith("wheel/")}
    assert len(wheel) == 58  # every training config 0.2.24 accepts among the examples it ships
    assert len(EXPECTED) == sum(1 for e in manifest if e["verdict"] == "accepted")
    assert (FIXTURES / "LICENSE-synth-ai").is_file()


@pytest.mark.parametrize("fixture", EXPECTED, ids=[p.stem for p in EXPECTED])
def test_body_matches_0_2_24(fixture: Path, tmp_path: Path) -> None:
    config_path, expected = _prepare(tmp_path, fixture)
    overrides = Overrides(**expected["overrides"])
    plan = plan_for(stub_config(config_path), overrides, bundle(env_key=CANARY))
    body = json.loads(json.dumps(plan.create_step.body))
    assert json_equal(body, expected["body"]), json.dumps(body, indent=1, sort_keys=True)


@pytest.mark.parametrize("fixture", EXPECTED, ids=[p.stem for p in EXPECTED])
def test_loaded_config_gives_same_body(fixture: Path, tmp_path: Path) -> None:
    """End to end through ``load_config``: it accepts the config and the plan body is unchanged."""
    config_path, expected = _prepare(tmp_path, fixture)
    loaded = load_config(config_path)
    assert loaded.flow == expected["flow"]
    plan = plan_for(loaded, Overrides(**expected["overrides"]), bundle(env_key=CANARY))
    assert json_equal(json.loads(json.dumps(plan.create_step.body)), expected["body"])
