"""``synth_nb.notebook.launch``: the ``--yes`` and headless paths say what validation warned about.

A typo'd key (``n_epoch`` for ``n_epochs``) is valid TOML and a valid config, so it would train with the
default silently; both paths print the warning (with its "did you mean") before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _wizard_support import clean_environ, make_project

from synth_nb import pipeline

TYPO = "warning: sft.toml: unknown key hyperparameters.n_epoch (did you mean 'n_epochs'?)"


@pytest.fixture
def project(tmp_path: Path, ip: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = make_project(tmp_path / "nb")
    (folder / "sft.toml").write_text((folder / "sft.toml").read_text() + "\n[hyperparameters]\nn_epoch = 3\n")
    ip.user_ns["__session__"] = str(folder / "train.ipynb")
    for name in set(__import__("os").environ) - set(clean_environ()):
        monkeypatch.delenv(name)
    monkeypatch.setenv("SYNTH_NB_WIDGETS", "0")  # headless: no wizard
    yield folder
    ip.user_ns.pop("__session__", None)


@pytest.fixture
def backend() -> Iterator[Any]:
    from synth_nb.local import start_backend

    started = start_backend(default_executor="replay", executor_options={"replay": {"speed": 50}})
    pipeline.use_local_backend(started)
    yield started
    pipeline.stop_local_backend()


def test_the_headless_preview_lists_the_typo(ip: Any, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_line_magic("synth_train", "-c sft.toml --backend http://127.0.0.1:9")
    out = capsys.readouterr().out
    assert "warning: unknown key hyperparameters.n_epoch (did you mean 'n_epochs'?)" in out
    assert "Nothing was sent" in out
    assert "1. POST /files: uploads train.jsonl (" in out  # the upload names its local file and size


async def test_yes_prints_the_typo_before_submitting(ip: Any, project: Path, backend: Any,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    job = ip.run_line_magic("synth_train", "-c sft.toml --backend local --yes --no-poll")
    out = capsys.readouterr().out
    assert TYPO in out and out.index(TYPO) < out.index(f"submitted sft job {job.id}")
    assert await job.wait(timeout=120) == "succeeded"
