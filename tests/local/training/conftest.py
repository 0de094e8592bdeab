"""Fixtures for the training tests (the doubles themselves live in ``fakes``)."""

from __future__ import annotations

import pytest

from synth_nb.local.examples.charclass import serve

from .fakes import PolicyServer

#: the task app's key in the RL tests; it must never show in what a job records
CANARY = "sk_env_rl_canary_value_9876"


@pytest.fixture
def policy_server():
    server = PolicyServer()
    yield server
    server.stop()


@pytest.fixture
def charclass():
    """The bundled charclass task app on 127.0.0.1, keyed with ``CANARY``; its URL."""
    handle, key = serve(api_key=CANARY)
    yield handle.url
    handle.stop()
