"""Fixtures for the training tests (the doubles themselves live in ``fakes``)."""

from __future__ import annotations

import pytest

from .fakes import PolicyServer


@pytest.fixture
def policy_server():
    server = PolicyServer()
    yield server
    server.stop()
