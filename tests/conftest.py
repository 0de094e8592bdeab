"""Suite-wide ordering: browser tests run last.

Sync Playwright keeps an event loop marked as running in the main thread for as long as its session
fixture lives, which would break every later test that calls ``asyncio.run``.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
