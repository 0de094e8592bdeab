"""Suite-wide: browser tests run last, and ``--backend local`` never leaves a process behind.

Sync Playwright keeps an event loop marked as running in the main thread for as long as its session
fixture lives, which would break every later test that calls ``asyncio.run``.

``--backend local`` starts a backend process that outlives the kernel or command that started it. Every
test (and every kernel or server a test starts, which inherit the environment) gets one data folder for it,
and the process started there, if any, is stopped when the session ends.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--with-compat", action="store_true", default=False,
                     help="also run the compat tests (synth-ai 0.2.24's own CLI; builds its venv once)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Browser tests last: each worker that reaches one runs only browser tests after it (see above)."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)


@pytest.fixture(scope="session", autouse=True)
def shared_backend_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``SYNTH_NB_BACKEND_DIR`` for the whole session; the backend process started there is stopped at the end."""
    from synth_nb.local.shared import DIR_VARIABLE, stop_backend

    folder = tmp_path_factory.mktemp("shared-backend")
    previous = os.environ.get(DIR_VARIABLE)
    os.environ[DIR_VARIABLE] = str(folder)
    try:
        yield str(folder)
    finally:
        stop_backend(folder)
        if previous is None:
            os.environ.pop(DIR_VARIABLE, None)
        else:
            os.environ[DIR_VARIABLE] = previous
