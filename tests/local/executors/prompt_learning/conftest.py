"""Fixtures: the bundled banking task app, a stand-in for the backend's policy route, a fake JobContext."""

from __future__ import annotations

from typing import Any

import pytest
from prompt_learning_support import TASK_APP_KEY, FakeContext, PolicyServer

from synth_nb.local.examples import start_task_app


@pytest.fixture(scope="session")
def policy_server():
    server = PolicyServer()
    yield server
    server.server.stop()


@pytest.fixture(scope="session")
def task_app():
    handle = start_task_app("banking", api_key=TASK_APP_KEY)
    yield handle
    handle.stop()


@pytest.fixture
def make_ctx(tmp_path, policy_server):
    def factory(body: dict[str, Any]) -> FakeContext:
        return FakeContext(body, tmp_path, policy_server)
    return factory
