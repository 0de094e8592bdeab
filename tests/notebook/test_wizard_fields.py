"""The wizard offers the override fields the selected config's flow honours, from the one override table:
prompt learning gets its rollout budget, iterations and training seeds (written into its config keys), and
no Model field, which it would ignore."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _wizard_support import clean_environ, make_project, tick

from synth_nb.cli.main import main
from synth_nb.notebook.wizard import Wizard


def _find(doc: Any, key: str) -> Any:
    """The first value of ``key`` in a nested document."""
    if isinstance(doc, dict):
        if key in doc:
            return doc[key]
        doc = list(doc.values())
    for value in doc if isinstance(doc, list) else []:
        found = _find(value, key)
        if found is not None:
            return found
    return None


def _names(wizard: Wizard) -> list[str]:
    return [field["name"] for field in wizard.override_fields]


async def test_prompt_learning_gets_its_own_fields_and_no_model(tmp_path: Path) -> None:
    wizard = tick(Wizard(make_project(tmp_path / "nb"), environ=clean_environ(), backend="http://127.0.0.1:9"),
                  "gepa.toml")
    assert _names(wizard) == ["task_url", "idempotency", "rollout_budget", "iterations", "train_seeds"]
    prefill = {f["name"]: f["prefill"] for f in wizard.override_fields}
    assert prefill["train_seeds"] == "0-2" and prefill["rollout_budget"] == ""
    wizard.overrides = {**wizard.overrides, "rollout_budget": "40", "train_seeds": "0-19"}
    wizard._recompute()
    (row,) = wizard.previews
    gepa = _find(json.loads(row["preview"])["steps"][0]["body"], "gepa")
    # no [prompt_learning.gepa.rollout] table in this config: the budget goes where GEPA also reads it
    assert gepa["rollout_budget"] == 40 and gepa["evaluation"]["train_seeds"] == list(range(20))
    wizard.overrides = {**wizard.overrides, "train_seeds": "ten"}
    wizard._recompute()
    assert "expected seeds such as 0-79" in wizard.override_errors["train_seeds"].lower()


def test_sft_keeps_its_fields_and_gets_no_prompt_learning_ones(tmp_path: Path) -> None:
    wizard = Wizard(make_project(tmp_path / "nb"), environ=clean_environ(), backend="http://127.0.0.1:9",
                    preselect=[tmp_path / "nb" / "sft.toml"])
    assert _names(wizard) == ["model", "dataset", "examples", "idempotency", "allow_experimental"]


def test_the_terminal_takes_the_same_flags(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    folder = make_project(tmp_path / "nb")
    monkeypatch.chdir(folder)
    assert main(["train", "gepa.toml", "--dry-run", "--json", "--iterations", "3", "--train-seeds", "5-7"]) == 0
    body = json.loads(capsys.readouterr().out)["steps"][0]["body"]
    text = json.dumps(body)
    assert '"num_generations": 3' in text and '"train_seeds": [5, 6, 7]' in text
    assert main(["train", "sft.toml", "--dry-run", "--iterations", "3"]) == 0
    assert "--iterations is ignored for SFT jobs" in capsys.readouterr().out
