"""Fixtures for re-running and forking jobs from their bundles (``tests/cli/``, ``tests/report/``): the shared
embedded backend without a default executor, so each job's config picks one, and a signed-in folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

#: the task app's key: a canary that must appear in no bundle, output or file
ENV_KEY = "sk_env_CANARY_bundle_eeeeee_6666"


@pytest.fixture()
def env_key(request: pytest.FixtureRequest) -> str:
    """The test module's own ``ENV_KEY`` canary, else this one."""
    return str(getattr(request.module, "ENV_KEY", ENV_KEY))


@pytest.fixture()
def backend_options(env_key: str) -> dict[str, Any]:
    return {"environment_api_key": env_key, "default_executor": None}


@pytest.fixture()
def folder(signed_in_folder: Path) -> Path:
    return signed_in_folder
