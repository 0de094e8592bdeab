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
    assert main(["train", "sft.toml", "--dry-run", "--iterations", "3"]) == 2  # a flag that does nothing says so
    assert "--iterations applies to prompt learning configs only" in capsys.readouterr().err


async def test_the_task_url_field_shows_the_url_the_send_uses_on_the_embedded_backend(
        tmp_path: Path, backend: Any, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A config whose task app does not answer runs on the embedded backend's bundled copy: the field shows that
    URL and says so ("the bundled banking app on the embedded backend"), not the dead one from the TOML, and the
    preview sends it. Back on a hosted backend, the field shows the config's own value again."""
    import asyncio

    from minimal_configs import LOCAL_GEPA

    from synth_nb import pipeline
    from synth_nb.backend import normalize_backend_url
    from synth_nb.pipeline import bundled_apps

    folder = make_project(tmp_path / "nb")
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url="http://127.0.0.1:9", budget=24))
    pipeline.use_local_backend(backend)
    try:
        wizard = tick(Wizard(folder, environ=clean_environ(), backend="local"), "gepa.toml")
        await asyncio.sleep(0.1)  # the tick is applied on the wizard's loop
        wizard._recompute()
        bundled = bundled_apps.served_at("banking", normalize_backend_url(backend.url))
        field = next(f for f in wizard.override_fields if f["name"] == "task_url")
        assert wizard.overrides["task_url"] == bundled and field["prefill"] == bundled
        assert field["hint"] == ("Used: the bundled banking app on the embedded backend (the config's "
                                 "http://127.0.0.1:9 does not answer)")
        (row,) = wizard.previews
        assert _find(json.loads(row["preview"])["steps"][0]["body"], "task_app_url") == bundled
        assert "task_url" not in wizard._changed_overrides()[0]  # not an override the user gave
        wizard.backend = "http://127.0.0.1:9"
        await asyncio.sleep(0.1)
        wizard._recompute()
        field = next(f for f in wizard.override_fields if f["name"] == "task_url")
        assert wizard.overrides["task_url"] == "http://127.0.0.1:9" and not field["hint"].startswith("Used:")
    finally:
        pipeline.stop_local_backend()
