"""Every action x door x {plain, --dry-run, --check}: what each sends to a real embedded backend.

The terminal (``synth-nb train`` through ``main``) and the magic (``%synth_train`` in an IPython shell,
headless) read the same flags the same way: a dry run or a check sends no job whatever it is combined
with, a combination that means nothing is one usage error on both, and where a job is sent both doors
send the same body.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from bundle_backend import ENV_KEY
from IPython.core.error import UsageError
from minimal_configs import LOCAL_GEPA

from synth_nb.cli.main import main

JOBS = "/prompt-learning/online/jobs"

#: what the request is about -> its flags (the magic adds --yes to submit a new config)
SUBJECTS: dict[str, list[str]] = {
    "new": ["-c", "gepa.toml"],
    "rerun": ["--rerun", "{parent}"],
    "fork": ["--fork", "{parent}"],
    "attach": ["--attach", "{parent}"],
    "compare": ["--compare", "{parent}"],
    "jobs": ["--jobs"],
}
STAGES: dict[str, list[str]] = {"plain": [], "dry_run": ["--dry-run"], "check": ["--check"]}
#: the pairs that send one job per door
SENDS = {("new", "plain"), ("rerun", "plain")}
#: the pairs that mean nothing: exit 2 / UsageError, nothing sent
REFUSED = {("fork", "check"), ("attach", "check"), ("compare", "check"), ("jobs", "check")}


class World:
    """One embedded backend, the banking task app, a project folder and a finished parent job with its bundle."""

    def __init__(self, backend: Any, task_app: Any, folder: Path, shell: Any) -> None:
        self.backend, self.task_app, self.folder, self.shell = backend, task_app, folder, shell
        self.parent = ""

    def ids(self) -> list[str]:
        answer = httpx.get(f"{self.backend.url}/api{JOBS}", timeout=30,
                           headers={"Authorization": f"Bearer {self.backend.api_key}"})
        answer.raise_for_status()
        body = answer.json()
        docs = body.get("jobs", body) if isinstance(body, dict) else body
        return [str(d.get("job_id") or d.get("id")) for d in docs]

    def body(self, job_id: str) -> Any:
        answer = httpx.get(f"{self.backend.url}/api{JOBS}/{job_id}/config", timeout=30,
                           headers={"Authorization": f"Bearer {self.backend.api_key}"})
        answer.raise_for_status()
        return answer.json()["config"]

    def words(self, subject: str, stage: str) -> list[str]:
        words = [w.format(parent=self.parent) for w in SUBJECTS[subject]] + STAGES[stage]
        return [*words, "--backend", self.backend.url, "--no-poll"]

    def cli(self, words: list[str]) -> int:
        return main(["train", *words])

    def magic(self, words: list[str]) -> int:
        """0 when the magic ran, 2 for a UsageError (what the terminal's exit 2 is)."""
        line = " ".join([*words, "--yes"] if words[:1] == ["-c"] else words)
        try:
            self.shell.find_line_magic("synth_train")(line)
        except UsageError:
            return 2
        return 0


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    from IPython.testing.globalipapp import get_ipython

    from synth_nb.local import start_backend
    from synth_nb.local.examples import start_task_app

    folder = tmp_path_factory.mktemp("matrix")
    shell = get_ipython()
    shell.run_line_magic("load_ext", "synth_nb")
    with pytest.MonkeyPatch.context() as mp, \
            start_backend(port=0, environment_api_key=ENV_KEY, default_executor=None) as backend, \
            start_task_app("banking", api_key=ENV_KEY) as app:
        for var in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_SKIP_TASK_APP_HEALTH_CHECK"):
            mp.delenv(var, raising=False)
        mp.setenv("ENVIRONMENT_API_KEY", ENV_KEY)
        mp.setenv("SYNTH_API_KEY", backend.api_key)
        mp.setenv("SYNTH_NB_BACKEND_DIR", str(folder / "shared-backend"))
        mp.setenv("SYNTH_NB_WIDGETS", "0")
        mp.chdir(folder)
        shell.user_ns["__session__"] = str(folder / "train.ipynb")
        (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url=app.url, budget=24))
        world = World(backend, app, folder, shell)
        assert main(["train", "-c", "gepa.toml", "--backend", backend.url]) == 0  # followed: its bundle is written
        (world.parent,) = world.ids()
        yield world
        shell.user_ns.pop("__session__", None)


@pytest.mark.parametrize("stage", list(STAGES))
@pytest.mark.parametrize("subject", list(SUBJECTS))
def test_each_door_sends_what_the_flags_say(world: World, subject: str, stage: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    words = world.words(subject, stage)
    sent: dict[str, list[str]] = {}
    for door, run in (("cli", world.cli), ("magic", world.magic)):
        before = world.ids()
        code = run(words)
        out, err = capsys.readouterr()
        sent[door] = [i for i in world.ids() if i not in before]
        assert ENV_KEY not in out + err
        if (subject, stage) in REFUSED:
            assert code == 2 and "does not apply to" in err + out + _last_usage_error(world, words)
        else:
            assert code == 0, f"{door} {words}: {out}\n{err}"
        assert len(sent[door]) == (1 if (subject, stage) in SENDS else 0), f"{door} {words}"
    if (subject, stage) in SENDS:  # both doors sent the same plan
        cli_body, magic_body = (world.body(sent[door][0]) for door in ("cli", "magic"))
        assert cli_body == magic_body


def _last_usage_error(world: World, words: list[str]) -> str:
    """The magic's message for ``words`` (the terminal prints its own to stderr)."""
    try:
        world.shell.find_line_magic("synth_train")(" ".join(words))
    except UsageError as exc:
        return str(exc)
    return ""


def test_both_doors_preview_the_same_plan_document(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    words = [*world.words("new", "dry_run"), "--json"]
    assert world.cli(words) == 0
    cli_doc = json.loads(capsys.readouterr().out)
    assert world.magic(words) == 0
    (magic_doc,) = json.loads(capsys.readouterr().out)
    for doc in (cli_doc, magic_doc):  # a fresh idempotency key per plan
        for step in doc["steps"]:
            step.get("headers", {}).pop("Idempotency-Key", None)
    assert cli_doc == magic_doc


@pytest.mark.parametrize("pair", [["--attach", "{parent}", "--rerun", "{parent}"], ["--jobs", "--compare"],
                                  ["--fork", "{parent}", "--attach", "{parent}"]])
def test_two_actions_together_are_one_usage_error(world: World, pair: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    words = [w.format(parent=world.parent) for w in pair] + ["--backend", world.backend.url]
    before = world.ids()
    assert world.cli(words) == 2
    err = capsys.readouterr().err
    assert "cannot be used together" in err and "Traceback" not in err
    assert world.magic(words) == 2
    assert world.ids() == before and os.path.isdir(world.folder)
