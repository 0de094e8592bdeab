"""Which configs the wizard ticks when it opens: the only valid one, else none, so ticking one of several
sends exactly that one (a pre-ticked first config would quietly go too)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from minimal_configs import LOCAL_GEPA
from shared_fixtures import prompt_learning_jobs

from synth_nb.notebook.wizard import Wizard

ENV_KEY = "sk_env_CANARY_wizpick_bbbbbb_4444"


def _environ(backend: Any) -> dict[str, str]:
    return {"SYNTH_API_KEY": backend.api_key, "ENVIRONMENT_API_KEY": ENV_KEY, "PATH": ""}


def _two_configs(folder: Path, task_app: Any) -> None:
    (folder / "gepa_small.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=12))
    (folder / "gepa_large.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=40))


async def test_several_valid_configs_open_with_none_ticked(tmp_path: Path, backend: Any, task_app: Any) -> None:
    _two_configs(tmp_path, task_app)
    wizard = Wizard(tmp_path, backend=backend.url, environ=_environ(backend))
    assert [c["path"] for c in wizard.configs] == ["gepa_large.toml", "gepa_small.toml"]
    assert all(c["valid"] for c in wizard.configs)
    assert wizard.selected == [] and not wizard.can_submit
    assert wizard.blockers == ["Select at least one config."]
    assert wizard.backend_url == backend.url + "/api"  # the backend is known before anything is ticked
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert wizard.submit_task is None and wizard.submit_error.startswith("Nothing was sent")
    assert prompt_learning_jobs(backend) == []


async def test_the_only_valid_config_opens_ticked(tmp_path: Path, backend: Any, task_app: Any) -> None:
    (tmp_path / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=12))
    (tmp_path / "broken.toml").write_text("[prompt_learning]\nalgorithm = \"gepa\"\n")
    wizard = Wizard(tmp_path, backend=backend.url, environ=_environ(backend))
    assert {c["path"]: c["valid"] for c in wizard.configs} == {"broken.toml": False, "gepa.toml": True}
    assert wizard.selected == ["gepa.toml"] and wizard.can_submit


async def test_ticking_one_of_two_configs_submits_exactly_one_job(tmp_path: Path, backend: Any,
                                                                  task_app: Any) -> None:
    _two_configs(tmp_path, task_app)
    wizard = Wizard(tmp_path, backend=backend.url, environ=_environ(backend), on_submitted=lambda jobs: None)
    wizard.selected = [*wizard.selected, "gepa_small.toml"]  # what the front end does when a box is ticked
    assert [p["path"] for p in wizard.previews] == ["gepa_small.toml"] and wizard.can_submit
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert wizard.submit_task is not None
    jobs = await wizard.submit_task
    assert wizard.submit_error == "" and len(jobs) == 1
    assert [s["path"] for s in wizard.submitted] == ["gepa_small.toml"]
    assert [j["job_id"] for j in prompt_learning_jobs(backend)] == [str(jobs[0].id)]
