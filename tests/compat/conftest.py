"""``compat`` tests drive the real synth-ai 0.2.24 CLI (a separate venv, ~4 min to build the first time).

They are opt-in: collected only with ``--with-compat`` (what ``make test`` passes) or ``-m compat``. They
share one xdist group, so one worker builds the venv while the others run the rest of the suite.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "compat: drives synth-ai 0.2.24 against the local backend (opt-in: -m compat)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--with-compat") or "compat" in (config.getoption("markexpr", "") or ""):
        return
    deselected = [item for item in items if item.get_closest_marker("compat")]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not item.get_closest_marker("compat")]
