"""The re-run and fork fixtures of ``tests/bundle_backend.py`` (a signed-in folder, a backend without a
default executor) and the terminal children a test spawns; a test module's own fixture of a name wins."""

from collections.abc import Iterator

import pexpect
import pytest
from bundle_backend import backend_options, env_key, folder  # noqa: F401


@pytest.fixture()
def children() -> Iterator[list[pexpect.spawn]]:
    """The CLI processes a test spawns in a terminal; any still alive at its end is ended."""
    spawned: list[pexpect.spawn] = []
    yield spawned
    for child in spawned:
        if child.isalive():
            child.terminate(force=True)
