"""Reuse the in-test backend defined for the client tests (``fake_backend``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_NAME = "synth_nb_tests_client_conftest"
if _NAME not in sys.modules:
    _spec = importlib.util.spec_from_file_location(_NAME, Path(__file__).parents[1] / "client" / "conftest.py")
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[_NAME] = _module
    _spec.loader.exec_module(_module)

fake_backend = sys.modules[_NAME].fake_backend
