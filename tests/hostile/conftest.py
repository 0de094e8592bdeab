"""Fixtures of the hostile-backend suite: the server (``hostile_backend``), a sandboxed working folder and its
file tree (``hostile_sandbox``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_backend import HostileBackend, serve
from hostile_sandbox import Tree
from minimal_configs import MINIMAL_GEPA


@pytest.fixture()
def hostile() -> Iterator[HostileBackend]:
    with serve() as backend:
        yield backend


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    """``sandbox/a/b/project`` with a GEPA config, the user's own README.md and config.toml, and a sibling folder."""
    folder = tmp_path / "sandbox" / "a" / "b" / "project"
    folder.mkdir(parents=True)
    (folder / "cfg.toml").write_text(MINIMAL_GEPA, encoding="utf-8")
    (folder / "README.md").write_text("the user's own readme\n", encoding="utf-8")
    (folder / "config.toml").write_text("# the user's own config\n", encoding="utf-8")
    (tmp_path / "sandbox" / "a" / "outside").mkdir()
    return folder


@pytest.fixture()
def tree(work: Path) -> Tree:
    return Tree(work.parents[2])

