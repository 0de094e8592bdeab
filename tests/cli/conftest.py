"""The in-test backend and fault transport of ``tests/fake_backend.py``, and the real embedded backend with
the banking task app of ``tests/bundle_backend.py`` (re-run and fork tests), as fixtures here; a test module
that defines a fixture of the same name uses its own."""

from bundle_backend import backend, folder, task_app  # noqa: F401
from fake_backend import fake_backend, faulty_transport, no_backoff  # noqa: F401
