"""Suite-wide: the slowest tests start first, and ``--backend local`` never leaves a process behind.

``make test`` runs the suite on several pytest-xdist workers, which take tests in collection order (with
``--dist loadgroup`` the xdist groups are dealt first, largest first: compat's tests go to one worker at the
start); the long ones (example notebooks, browser journeys, real training) go first, so no worker is left
with one of them at the end while the others idle. A browser test module opens its own Chromium (see
``tests/browser/conftest.py``), so any worker may run any test in any order.

``--backend local`` starts a backend process that outlives the kernel or command that started it. Every
test (and every kernel or server a test starts, which inherit the environment) gets one data folder for it,
and the process started there, if any, is stopped when the session ends.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

#: the shared fixtures: backends, task apps, working folders, the IPython shell
pytest_plugins = ["shared_fixtures"]  # not "fixtures": that is the name of a pytest plugin of its own


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--with-compat", action="store_true", default=False,
                     help="also run the compat tests (synth-ai 0.2.24's own CLI; builds its venv once)")


#: the longest-running test files (tens of seconds per test on a loaded 2-core machine, from CI's
#: ``--durations``), longest first: none of them may be left to start last on one worker while the others idle
SLOW_FIRST = (
    "tests/notebook/test_example_notebooks.py",  # every example notebook through a real kernel, make demo
    "tests/browser/test_backend_journeys.py",  # a ~60 s replay the journey attaches to after a kernel restart
    "tests/browser/test_example_notebooks.py",
    "tests/browser/test_monitor.py",
    "tests/browser/test_close_and_shut_down.py",
    "tests/browser/test_reopen_snapshots.py",
    "tests/browser/test_accessibility.py",
    "tests/browser/test_magic_and_narrow_panel.py",
    "tests/cli/test_dead_backend.py",
    "tests/cli/test_chart_journey.py",  # a 25 s replay watched in tmux
    "tests/browser/test_wizard_journeys.py",
    "tests/browser/test_monitor_journeys.py",
    "tests/cli/test_terminal_pickers.py",
    "tests/local/training/",  # real training of tiny models
    "tests/red_team/test_fault_proxy.py",
    "tests/notebook/test_magic_outputs.py",
    "tests/local/executors/prompt_learning/test_offline_policy.py",
    "tests/local/test_stop_proof.py",
    "tests/local/test_model_server.py",
    "tests/report/",
    "tests/cli/test_line_mode.py",
    "tests/pipeline/test_pipeline_shared_backend.py",
    "tests/pipeline/test_estimate_vs_real.py",  # the prompt-learning examples, --check then for real
    "tests/browser/",
)


def _start_rank(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return next((rank for rank, prefix in enumerate(SLOW_FIRST) if path.startswith(prefix)), len(SLOW_FIRST))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=_start_rank)  # stable: within a rank, the collection order


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
