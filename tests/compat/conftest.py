"""``compat`` tests drive released synth-ai CLIs (0.2.24, 0.4.11, 0.4.12, 0.5.0), each in a venv of its own
built once under ``.ci-cache/`` (``synth_ai_venvs``).

They are opt-in: collected only with ``--with-compat`` (what ``make test`` passes) or ``-m compat``. They
share one xdist group, so one worker builds the venvs and runs them while the others run the rest of the
suite.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "compat: drives released synth-ai CLIs against the local backend (opt-in: -m compat)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--with-compat") or "compat" in (config.getoption("markexpr", "") or ""):
        return
    deselected = [item for item in items if item.get_closest_marker("compat")]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not item.get_closest_marker("compat")]
