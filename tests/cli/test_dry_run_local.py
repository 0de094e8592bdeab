"""``--dry-run --backend local`` shows what the send sends: the embedded backend's URL and key and, where the
config's own task app does not answer, the bundled app that backend serves; nothing is created. The real run's
plan is then the dry run's, and a fork's dry run (its printed command, ``--backend local``) is its parent's
plan."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from minimal_configs import LOCAL_GEPA
from shared_fixtures import prompt_learning_jobs

from synth_nb import pipeline
from synth_nb.backend import normalize_backend_url
from synth_nb.cli.main import main
from synth_nb.pipeline import bundled_apps
from synth_nb.secrets import mask


@pytest.fixture()
def local(folder: Path, backend: Any) -> Iterator[Any]:
    """``--backend local`` is ``backend`` (a real embedded backend serving the bundled task apps)."""
    pipeline.use_local_backend(backend)
    try:
        yield backend
    finally:
        pipeline.stop_local_backend()


def _dry_run(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main([*args, "--dry-run", "--json"]) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_a_local_dry_run_resolves_the_target_as_the_send_does(folder: Path, local: Any,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # the config names a task app on a port where nothing listens: the send stands the bundled app in
    (folder / "gepa.toml").write_text(LOCAL_GEPA.format(task_url="http://127.0.0.1:9", budget=24))
    bundled = bundled_apps.served_at("banking", normalize_backend_url(local.url))
    before = len(prompt_learning_jobs(local))

    assert main(["train", "-c", "gepa.toml", "--backend", "local", "--dry-run"]) == 0
    shown, said = capsys.readouterr()
    assert f"backend:   {normalize_backend_url(local.url)}" in shown and "started on submission" not in shown
    assert f"secret:    SYNTH_API_KEY = {mask(local.api_key)}  (from local backend)" in shown
    assert f'"task_app_url": "{bundled}"' in shown and "127.0.0.1:9\"" not in shown
    assert f"using the embedded backend's bundled 'banking' task app at {bundled}" in said
    planned = _dry_run(["train", "-c", "gepa.toml", "--backend", "local"], capsys)
    assert planned["steps"][0]["body"]["config_body"]["prompt_learning"]["task_app_url"] == bundled
    assert len(prompt_learning_jobs(local)) == before  # the dry runs created no job
    assert not (folder / ".synth_nb" / "jobs.json").exists()

    assert main(["train", "-c", "gepa.toml", "--backend", "local", "--yes"]) == 0
    parent = re.search(r"submitted prompt_learning job (pl_\w+)", capsys.readouterr().out).group(1)  # type: ignore[union-attr]
    sent = json.loads((folder / "results" / parent / "plan.json").read_text())
    assert sent == planned  # what the dry run showed is what was sent

    assert main(["train", "--fork", parent]) == 0
    command = capsys.readouterr().out.strip().splitlines()[-1].strip()
    assert "--backend local" in command  # the embedded backend ran the parent
    assert _dry_run(shlex.split(command)[1:], capsys) == sent
