"""Fixtures of the replay tests: a replayed shape (``replay``, the shape's name as the parameter) and the
working folder ``synth-nb attach`` runs in (``attach_env``: a temporary folder whose ``.env`` holds the key)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_server import KEY, Replay, serve


@pytest.fixture
def attach_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SYNTH_API_KEY", raising=False)
    monkeypatch.delenv("SYNTH_BACKEND_OVERRIDE", raising=False)
    (tmp_path / ".env").write_text(f"SYNTH_API_KEY={KEY}\n")


@pytest.fixture
def replay(request: pytest.FixtureRequest) -> Iterator[Replay]:
    with serve(request.param) as running:
        yield running
