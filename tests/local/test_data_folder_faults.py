"""A data folder the backend cannot write (read-only, disk full) is one sentence naming the folder and the
fix: 507/503 from the server, exit 2 from ``synth-nb backend`` and ``train --backend local``.

A full disk is injected at the storage layer of a real server run in this process (filling a real disk is
not something a test can do); the read-only folder is real: a read-only tmpfs when the tests run as root
(who may write anywhere else), a folder without write permission otherwise.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from local_backend_helpers import API_KEY, replay_body
from minimal_configs import MINIMAL_GEPA

from synth_nb.cli.backend import main as backend_main
from synth_nb.cli.main import main
from synth_nb.local import shared
from synth_nb.local.errors import DataFolderError
from synth_nb.local.storage import Storage


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() == 0:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)], check=True)
        try:
            yield folder
        finally:
            subprocess.run(["umount", str(folder)], check=True)
    else:
        folder.chmod(0o500)
        try:
            yield folder
        finally:
            folder.chmod(0o700)


def test_backend_start_in_a_read_only_folder_is_one_line_and_exit_2(
        read_only_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert backend_main(["--start", "--data-dir", str(read_only_folder)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("error:") == 1
    assert str(read_only_folder) in err and "make it writable" in err and "--data-dir" in err


def test_train_on_the_local_backend_in_a_read_only_folder_is_exit_2(
        read_only_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SYNTH_NB_BACKEND_DIR", str(read_only_folder))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pl.toml").write_text(MINIMAL_GEPA)
    assert main(["train", "-c", "pl.toml", "--backend", "local", "--no-poll"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and str(read_only_folder) in err and "make it writable" in err


def test_the_foreground_backend_in_a_read_only_folder_is_exit_2(
        read_only_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert backend_main(["--port", "0", "--data-dir", str(read_only_folder)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and str(read_only_folder) in err


def test_a_backend_that_dies_on_a_full_disk_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It could not even write its log: the empty tail is explained by the free space left."""
    def dies_silently(folder: Path, options: tuple[str, ...]) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-c", "raise SystemExit(1)"], stderr=subprocess.DEVNULL)

    monkeypatch.setattr(shared, "_spawn", dies_silently)
    monkeypatch.setattr(shared.shutil, "disk_usage", lambda path: SimpleNamespace(total=10**9, used=10**9, free=0))
    with pytest.raises(DataFolderError, match=f"no space left on {tmp_path / 'data'}"):
        shared.ensure_backend(tmp_path / "data")


@pytest.fixture
def client(backend: Any) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=backend.url + "/api", headers={"Authorization": f"Bearer {API_KEY}"},
                      timeout=30.0, trust_env=False) as http:
        yield http


def test_job_creation_on_a_full_disk_is_507_naming_the_folder(client: httpx.Client, backend: Any,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Storage, "create_job", full)
    answer = client.post("/learning/jobs", json=replay_body())
    assert answer.status_code == 507
    assert answer.json()["detail"].startswith(f"no space left on {backend.data_dir}")


def test_an_upload_on_a_full_disk_is_507_and_leaves_no_file(client: httpx.Client, backend: Any,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    opened = Storage.open_upload

    class Full:
        def __init__(self, handle: Any) -> None:
            self.handle = handle

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Storage, "open_upload", lambda self, name: Full(opened(self, name)))
    answer = client.post("/files", files={"file": ("train.jsonl", b'{"messages": []}\n')},
                         data={"purpose": "fine-tune"})
    assert answer.status_code == 507 and "no space left on" in answer.json()["detail"]
    assert not any(backend.app.state.backend.storage.files_dir.iterdir())
