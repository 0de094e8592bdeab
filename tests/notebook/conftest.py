"""A notebook folder for ``%synth_train`` run headless on replayed jobs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _wizard_support import clean_environ, make_project


@pytest.fixture(autouse=True)
def _results_land_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A panel writes a finished prompt-learning job's files to ``results/<job id>/`` of the working directory
    when its results folder is not known: here that is the test's own folder, never the checkout."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def project(tmp_path: Path, ip: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The folder, the shell's notebook inside it, only the clean environment; no task app, no widgets."""
    folder = make_project(tmp_path / "nb")  # its .env holds a SYNTH_API_KEY meant for the hosted backend
    ip.user_ns["__session__"] = str(folder / "train.ipynb")
    for name in set(os.environ) - set(clean_environ()):
        monkeypatch.delenv(name)
    monkeypatch.setenv("SYNTH_SKIP_TASK_APP_HEALTH_CHECK", "1")  # replayed jobs need no task app
    monkeypatch.setenv("SYNTH_NB_WIDGETS", "0")
    yield folder
    ip.user_ns.pop("__session__", None)
