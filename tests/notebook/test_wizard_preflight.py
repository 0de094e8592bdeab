"""The pre-flight card on the wizard's Preview step: ``--check``'s card, masked, and never a job."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from minimal_configs import LOCAL_GEPA
from shared_fixtures import prompt_learning_jobs

from synth_nb.notebook.wizard import Wizard

ENV_KEY = "sk_env_CANARY_wizcard_aaaaaa_5555"



async def test_the_preview_step_runs_the_card_and_sends_no_job(tmp_path: Path, backend: Any, task_app: Any) -> None:
    (tmp_path / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=40))
    environ = {"SYNTH_API_KEY": backend.api_key, "ENVIRONMENT_API_KEY": ENV_KEY, "PATH": ""}
    wizard = Wizard(tmp_path, backend=backend.url, environ=environ)
    assert wizard.can_submit and wizard.preflight == []
    wizard._handle_custom_msg({"type": "preflight"}, [])
    assert wizard.preflight_task is not None and wizard.preflight_running
    await wizard.preflight_task
    assert not wizard.preflight_running and wizard.preflight_error == ""
    (card,) = wizard.preflight
    assert card["path"] == "gepa.toml" and card["ok"], card["html"]
    assert "pre-flight check: gepa.toml [prompt_learning/gepa]" in card["html"]
    assert "dry rollout" in card["html"] and "reward" in card["html"] and "estimate" in card["html"]
    assert prompt_learning_jobs(backend) == []
    state = json.dumps(wizard.get_state(), default=str)
    assert ENV_KEY not in state and backend.api_key not in state

    # a card describes the payload it checked: changing the payload drops it, in the same message to the
    # front end as the new Preview (never a new diff drawn beside the old card)
    sent: list[dict[str, Any]] = []
    wizard._send = lambda msg, buffers=None: sent.append(msg)
    wizard.overrides = {**wizard.overrides, "task_url": "http://127.0.0.1:9"}
    assert wizard.preflight == []
    [update] = [m["state"] for m in sent if m.get("method") == "update" and "previews" in m["state"]]
    assert update["preflight"] == [] and "127.0.0.1:9" in json.dumps(update["previews"])
    del wizard._send
    wizard.overrides = {**wizard.overrides, "task_url": task_app.url}
    assert [c["path"] for c in wizard.preflight] == ["gepa.toml"]


async def test_an_unreachable_task_app_is_a_card_that_is_not_ready(tmp_path: Path, backend: Any) -> None:
    (tmp_path / "gepa.toml").write_text(LOCAL_GEPA.format(task_url="http://127.0.0.1:9", budget=40))
    environ = {"SYNTH_API_KEY": backend.api_key, "ENVIRONMENT_API_KEY": ENV_KEY, "PATH": ""}
    wizard = Wizard(tmp_path, backend=backend.url, environ=environ)
    wizard._handle_custom_msg({"type": "preflight"}, [])
    assert wizard.preflight_task is not None
    await wizard.preflight_task
    (card,) = wizard.preflight
    assert not card["ok"] and "not ready" in card["html"] and "127.0.0.1:9" in card["html"]
    assert prompt_learning_jobs(backend) == []
